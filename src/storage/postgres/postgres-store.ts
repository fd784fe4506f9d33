import pg from 'pg';
import type { Logger } from 'pino';
import { scrubForLog } from '../../lib/logger.js';
import { createSqlRecords, type SqlRecords } from '../sql/sql-records.js';
import { postgresDialect } from '../sql/sql-runner.js';
import type { Change, Store, WriteTx } from '../store.js';
import { CHANGES_CHANNEL, createPostgresChangeFeed } from './postgres-change-feed.js';
import { createPostgresRateCounters } from './postgres-rate-counters.js';
import { isConnectionError, isPolicyStateChanged, requestKeyError, storageError, unavailable } from './postgres-errors.js';
import { parseConnectionUrl } from '../postgres-url.js';
import { libpqSslUrl } from './libpq-ssl-url.js';
import { migratePostgres } from './postgres-migrate.js';
import { createPostgresRunner, createTransactionRunner, sqlLiteral, type TransactionRunner } from './postgres-runner.js';
import { batchKeyLookups } from './batched-key-lookups.js';
import { createKnownPolicyState, KNOWN_STATE_SQL, type KnownStateRow } from './known-policy-state.js';

export interface PostgresStoreOptions {
  /** `postgres://user:pass@host:port/db?sslmode=…`; never logged. */
  url: string;
  poolSize: number;
  /** This daemon's id: changes it announces are tagged with it and not delivered back to it. */
  node: string;
  log: Logger;
  /** How often other daemons' changes are read without a notification. */
  pollMs?: number;
  /** Time for pruning old rate events (the daemon's clock). */
  now?: () => number;
  /** How long a statement may go unanswered before the database counts as unavailable. */
  queryTimeoutMs?: number;
  /** How long `ping()` (`GET /v1/health`) waits for an answer. */
  pingTimeoutMs?: number;
}

/**
 * A frozen server, or a network partition the socket does not see, leaves a statement
 * unanswered for as long as TCP takes to give up (a quarter of an hour): past this, the call is
 * 503 `storage_unavailable` and the connection is dropped.
 */
const QUERY_TIMEOUT_MS = 15_000;
const PING_TIMEOUT_MS = 3_000;

// BIGINT (int8) columns hold Unix ms and counts, all well inside 2^53: read them as numbers.
const INT8 = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

const PRUNE_EVERY_MS = 60_000;
/** How long the change log keeps a row: a daemon that cannot read it for longer resyncs (docs/cluster.md). */
const KEEP_CHANGES_MS = 10 * 60_000;

// Rate windows are a minute; anything older counts for nobody.
const KEEP_RATE_EVENTS_MS = 60 * 60_000;

/**
 * Deletes the change log rows written before `before` (Unix ms) and raises the pruned mark the
 * change feeds compare with. One statement, so a reader sees the deletes and the mark together
 * or neither; the mark row is left alone when nothing was old enough, rather than rewritten by
 * every daemon each minute.
 */
export async function pruneChanges(db: Pick<pg.ClientBase, 'query'>, before: number): Promise<void> {
  await db.query(
    `WITH gone AS (DELETE FROM changes WHERE at < $1 RETURNING seq)
     UPDATE changes_pruned SET seq = GREATEST(seq, (SELECT max(seq) FROM gone)) WHERE id = 1 AND EXISTS (SELECT 1 FROM gone)`,
    [before],
  );
}

/** `host:port/database` of a connection URL: where, never who or with what password. */
export function describeLocation(url: string): string {
  try {
    // As the driver reads it: libpq's `?host=` and `?port=` win over the URL's own.
    const { host, port, database } = parseConnectionUrl(url);
    return `${host || 'localhost'}:${port || '5432'}/${database ?? ''}`;
  } catch {
    return 'postgres';
  }
}

/** Why the server refused this login (SQLSTATE class 28, 3D000), without naming the user; null for any other error. */
function loginRefusal(err: unknown): string | null {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return null;
  if (code.startsWith('28')) return `the server refused the login: check the user and password in storage.url (SQLSTATE ${code})`;
  if (code === '3D000') return `the database does not exist (SQLSTATE ${code})`;
  return null;
}

/** Why a connection failed, as the driver or the socket said it (`ECONNREFUSED 127.0.0.1:5432`), credentials masked. */
function connectionFailure(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; errors?: unknown };
  // Node reports a name with several addresses (localhost: ::1 and 127.0.0.1) as an AggregateError with no message.
  const first = Array.isArray(e.errors) && e.errors[0] instanceof Error ? e.errors[0].message : '';
  const message = typeof e.message === 'string' && e.message ? e.message : first;
  const code = typeof e.code === 'string' && !message.includes(e.code) ? e.code : '';
  return scrubForLog([code, message].filter(Boolean).join(' ') || 'no answer') as string;
}

/** The PostgreSQL store: the port, plus what only it has. */
export interface PostgresStore extends Store {
  /** `pruneChanges` on the store's pool, by default of the rows older than KEEP_CHANGES_MS (run every minute). */
  pruneChanges(before?: number): Promise<void>;
}

/**
 * The PostgreSQL store: several daemons on one database. Every write is one transaction on a
 * pooled connection; the database's own row locks, unique indexes and `SKIP LOCKED` make
 * decisions, expiries, dedupe and deliveries happen once whichever daemon races. Changes are
 * written to the change log in the same transaction and announced with NOTIFY once it has
 * committed, so other daemons hear of them only after commit.
 */
export async function openPostgresStore({
  url,
  poolSize,
  node,
  log,
  pollMs = 1000,
  now = Date.now,
  queryTimeoutMs = QUERY_TIMEOUT_MS,
  pingTimeoutMs = PING_TIMEOUT_MS,
}: PostgresStoreOptions): Promise<PostgresStore> {
  const connection = { connectionString: await libpqSslUrl(url), types, application_name: `countersign ${node}` };
  // Migrations may wait for another daemon's (the advisory lock) and run long: no read timeout there.
  const migrations = new pg.Pool({ ...connection, max: 1, connectionTimeoutMillis: 5000 });
  migrations.on('error', () => {});
  try {
    await migratePostgres(migrations);
  } catch (err) {
    // Read at start by the operator, not a client: where the database is and why it cannot be
    // reached (a typo in the host, a closed port), never who connects or with what password.
    if (isConnectionError(err)) throw new Error(`cannot reach PostgreSQL at ${describeLocation(url)}: ${connectionFailure(err)}`, { cause: err });
    // The server's own words name the user ('role "x" does not exist'): said in ours instead.
    const refused = loginRefusal(err);
    if (refused) throw new Error(`cannot use PostgreSQL at ${describeLocation(url)}: ${refused}`, { cause: err });
    throw storageError(err);
  } finally {
    await migrations.end().catch(() => {});
  }

  const pool = new pg.Pool({
    ...connection,
    max: poolSize,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    query_timeout: queryTimeoutMs,
  });
  // An idle connection dropped by the server (a restart) is discarded and replaced on demand.
  pool.on('error', (err) => log.warn({ err: err.message }, 'an idle database connection failed'));

  const onPool = createPostgresRunner(pool);
  const read = createSqlRecords(onPool, postgresDialect);
  const byClient = new WeakMap<pg.PoolClient, { runner: TransactionRunner; records: SqlRecords }>();
  const feed = createPostgresChangeFeed({ pool, connect: () => new pg.Client(connection), node, log, pollMs });
  await feed.start();

  /**
   * The change log rows of a transaction, sent with its COMMIT (TransactionRunner.commit): the
   * values are the daemon's own (event names, request ids, its node id), written as literals.
   */
  function changeRows(changes: Change[]): string[] {
    if (changes.length === 0) return [];
    const rows = changes.map((c) => `(${sqlLiteral(c.type)}, ${sqlLiteral(c.requestId ?? null)}, ${sqlLiteral(node)})`);
    return [`INSERT INTO changes (type, request_id, node) VALUES ${rows.join(', ')}`];
  }

  // The wake-up for other daemons, sent after COMMIT rather than inside the transaction: a
  // transaction that NOTIFYs holds a database-wide lock from its commit until it ends, through
  // the WAL flush, so notifying writes could not share an fsync (group commit) and committed one
  // at a time. The changes themselves are in the change log, written in the transaction; a
  // notification only says "read it", so one in flight stands for every change committed
  // meanwhile, and one lost (a crash between COMMIT and here) is made up by the feed's poll. The
  // payload is this daemon's id, so its own feed does not read the log for nothing.
  let notifying = false;
  let notifyAgain = false;
  function wakeOthers() {
    if (notifying) {
      notifyAgain = true;
      return;
    }
    notifying = true;
    pool
      .query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, node])
      .catch((err: Error) => log.warn({ err: err.message }, 'cannot notify other daemons; they will poll'))
      .finally(() => {
        notifying = false;
        if (notifyAgain && !closing) {
          notifyAgain = false;
          wakeOthers();
        }
      });
  }
  let closing = false;

  const policyState = createKnownPolicyState();

  async function write<T>(work: (tx: WriteTx) => Promise<T>): Promise<T> {
    try {
      return await writeOnce(work);
    } catch (err) {
      if (!isPolicyStateChanged(err)) throw err;
      // Another daemon changed the policy state since this one read it: nothing was committed.
      // Run the transaction again, reading the row with its BEGIN, so it cannot fail so twice.
      policyState.forget();
      return writeOnce(work, { readState: true });
    }
  }

  async function writeOnce<T>(work: (tx: WriteTx) => Promise<T>, { readState = false } = {}): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw storageError(err);
    }
    let bound = byClient.get(client);
    if (!bound) {
      // The pool listens for errors only on idle connections. One that dies while checked out,
      // between two statements (a fast shutdown, a failover), emits 'error' with no query to take
      // it: unheard, that ends the process. Heard, the next statement fails and the write is 503.
      client.on('error', (err) => log.warn({ err: err.message }, 'a database connection in use failed'));
      const runner = createTransactionRunner(client);
      byClient.set(client, (bound = { runner, records: createSqlRecords(runner, postgresDialect) }));
    }
    const { runner, records } = bound;
    const changes: Change[] = [];
    const after: Array<() => void> = [];
    let broken: Error | undefined;
    try {
      // Every create reads the policy state row: the one this daemon knows, checked with the
      // COMMIT (known-policy-state.ts); when it knows none, the row comes with the BEGIN.
      let row = readState ? undefined : policyState.row;
      const checked = !row;
      if (row) runner.begin();
      else policyState.remember((row = (await runner.beginWith<KnownStateRow>(KNOWN_STATE_SQL))[0]));
      const tx: WriteTx = {
        requests: records.requests,
        deliveries: records.deliveries,
        tokens: records.tokens,
        blobs: records.blobs,
        webSessions: records.webSessions,
        counters: records.counters,
        mutes: records.mutes,
        bursts: records.bursts,
        notices: records.notices,
        keys: records.keys,
        policy: row ? policyState.inTransaction(records.policy, runner, row, checked) : records.policy,
        announce: (change) => void changes.push(change),
        afterCommit: (cb) => void after.push(cb),
      };
      const value = await work(tx);
      await runner.commit(changeRows(changes));
      if (changes.length) wakeOthers();
      for (const cb of after) {
        try {
          cb();
        } catch (err) {
          log.error({ err }, 'an after-commit callback failed');
        }
      }
      return value;
    } catch (err) {
      // Statements deferred by a transaction that failed are never sent.
      const { opened } = runner.discard();
      if (isConnectionError(err)) broken = err as Error;
      // A COMMIT that failed on a dead connection may or may not have committed: the caller is
      // told the database is unavailable, never that the write succeeded.
      else if (opened) await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw requestKeyError(storageError(err));
    } finally {
      client.release(broken);
    }
  }

  // `at` is the database's clock: compared with this host's real one, never a test's fake clock.
  const pruneOld = (before = Date.now() - KEEP_CHANGES_MS) => pruneChanges(pool, before);

  const prune = setInterval(() => {
    const t = now();
    void pruneOld()
      .then(() => pool.query('DELETE FROM rate_events WHERE at < $1', [t - KEEP_RATE_EVENTS_MS]))
      .catch((err: Error) => log.warn({ err: err.message }, 'pruning the change log failed'));
  }, PRUNE_EVERY_MS);
  prune.unref();

  return {
    requests: batchKeyLookups(read.requests, onPool),
    deliveries: read.deliveries,
    tokens: read.tokens,
    blobs: read.blobs,
    webSessions: read.webSessions,
    mutes: read.mutes,
    bursts: read.bursts,
    notices: read.notices,
    keys: read.keys,
    policy: read.policy,
    nodes: read.nodes,
    rates: createPostgresRateCounters(onPool),
    write,
    pruneChanges: pruneOld,
    onRemoteChange: (listener) => feed.subscribe(listener),
    info: { kind: 'postgres', location: describeLocation(url) },
    async ping() {
      // A server that takes no writes (a standby, mid-failover) serves nothing this daemon does.
      const read = onPool.get<{ read_only: string }>("SELECT current_setting('transaction_read_only') AS read_only");
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(unavailable()), pingTimeoutMs)));
      try {
        const row = await Promise.race([read, late]);
        if (row?.read_only === 'on') throw unavailable();
      } finally {
        clearTimeout(timer);
        read.catch(() => {});
      }
    },
    async close() {
      closing = true;
      clearInterval(prune);
      await feed.stop();
      await pool.end();
    },
  };
}

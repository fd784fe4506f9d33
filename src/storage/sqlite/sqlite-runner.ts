import type Database from 'better-sqlite3';
import type { SqlRunner } from '../sql/sql-runner.js';

/**
 * A SqlRunner over one better-sqlite3 connection. Statements are prepared once per SQL text.
 * The calls are synchronous underneath; the promises only give both stores one shape.
 */
export function createSqliteRunner(db: Database.Database): SqlRunner {
  return runnerOver(statementCache(db));
}

/** A SqlRunner for reads outside a transaction; `endSnapshot()` ends the read transaction it may hold. */
export interface SqliteReadRunner extends SqlRunner {
  endSnapshot(): void;
}

/**
 * A SqlRunner for reads outside a transaction that sees committed data only. It reads on the
 * writer's connection while no write transaction is open there, else on `reader`, a second
 * connection (WAL readers never see a writer's uncommitted pages). Why not always `reader`: a
 * connection drops its whole page cache at the start of a read whenever another connection has
 * written since, so under a steady stream of writes every read on `reader` starts cold (about
 * four times the cost of the same read on the writer's warm cache). The calls are synchronous,
 * so the check and the read happen in the same instant.
 *
 * The reads on the writer's connection in one event-loop turn share one read transaction: a
 * read on its own takes and drops SQLite's locks (two fcntl calls, about two thirds of an
 * indexed lookup's 10 µs here), one inside an open transaction does not. The transaction ends
 * when the turn does (setImmediate) and before any write begins (`endSnapshot()`, which the
 * write queue calls before BEGIN IMMEDIATE), so it never holds a writer back, and since every
 * commit to the file goes through that queue, it never misses one.
 *
 * A read may see a batch that is committed but not yet on disk (sqlite-write-queue.ts syncs it
 * off the event loop): its result waits for `unsynced()`, so nobody is told of a write before
 * it is durable, as with a COMMIT that fsyncs.
 */
export function createSqliteReadRunner(writer: Database.Database, reader: Database.Database, unsynced: () => Promise<void> | null): SqliteReadRunner {
  const onWriter = statementCache(writer);
  const onReader = statementCache(reader);
  const begin = writer.prepare('BEGIN');
  const commit = writer.prepare('COMMIT');
  let snapshot = false;
  const endSnapshot = () => {
    if (!snapshot) return;
    snapshot = false;
    // A read that failed may have rolled the transaction back already.
    if (writer.inTransaction) commit.run();
  };
  const prepare = (sql: string) => {
    if (!snapshot) {
      if (writer.inTransaction) return onReader(sql);
      begin.run();
      snapshot = true;
      setImmediate(endSnapshot);
    }
    return onWriter(sql);
  };
  return { ...runnerOver(prepare, unsynced), endSnapshot };
}

function statementCache(db: Database.Database) {
  const cache = new Map<string, Database.Statement>();
  return (sql: string) => {
    let stmt = cache.get(sql);
    if (!stmt) cache.set(sql, (stmt = db.prepare(sql)));
    return stmt;
  };
}

// better-sqlite3 refuses undefined; SQL has only NULL.
const bind = (params: readonly unknown[]) => params.map((p) => (p === undefined ? null : p));

function runnerOver(prepare: (sql: string) => Database.Statement, unsynced: () => Promise<void> | null = () => null): SqlRunner {
  return {
    async all<T>(sql: string, params: readonly unknown[] = []) {
      const rows = prepare(sql).all(bind(params)) as T[];
      const wait = unsynced();
      if (wait) await wait;
      return rows;
    },
    async get<T>(sql: string, params: readonly unknown[] = []) {
      const row = prepare(sql).get(bind(params)) as T | undefined;
      const wait = unsynced();
      if (wait) await wait;
      return row;
    },
    async run(sql: string, params: readonly unknown[] = []) {
      return prepare(sql).run(bind(params)).changes;
    },
    // A statement costs no round trip here: nothing to gain by waiting.
    async defer(sql: string, params: readonly unknown[] = []) {
      prepare(sql).run(bind(params));
    },
  };
}

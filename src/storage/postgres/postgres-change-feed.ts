import pg from 'pg';
import type { Logger } from 'pino';
import type { Change } from '../store.js';

export const CHANGES_CHANNEL = 'countersign_changes';

// A seq missing below ones already read belongs to a transaction still committing, or to one
// that rolled back (a permanent hole). Wait this long for it before giving up on it.
const GAP_TIMEOUT_MS = 10_000;
const BATCH = 500;

export interface ChangeFeedOptions {
  pool: pg.Pool;
  /** A fresh dedicated connection for LISTEN. */
  connect: () => pg.Client;
  node: string;
  log: Logger;
  /** How often the change log is read even without a notification. */
  pollMs: number;
}

/**
 * Other daemons' committed changes, in commit-ish order. NOTIFY (sent by a daemon after it
 * commits changes) wakes the feed at once; a poll every `pollMs` catches anything a notification
 * missed (a dropped LISTEN connection, a restart of PostgreSQL), so a wake-up is at worst late.
 * Changes are read by seq from the `changes` table; seqs taken by transactions that commit out
 * of order are waited for (GAP_TIMEOUT_MS), never skipped early.
 */
export function createPostgresChangeFeed({ pool, connect, node, log, pollMs }: ChangeFeedOptions) {
  const listeners = new Set<(change: Change) => void>();
  /** Every seq at or below this has been handled (or given up on). */
  let cursor = 0;
  /** Seqs above the cursor already handled. */
  const seen = new Set<number>();
  let gapSince: number | null = null;
  let reading: Promise<void> | null = null;
  let again = false;
  let listener: pg.Client | null = null;
  let stopped = false;
  let poller: ReturnType<typeof setInterval> | null = null;
  let reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  let backoff = 100;

  function deliver(change: Change) {
    for (const l of listeners) {
      try {
        l(change);
      } catch (err) {
        log.error({ err }, 'a change listener failed');
      }
    }
  }

  async function readOnce() {
    const { rows } = await pool.query<{ seq: number; type: string; request_id: string | null; node: string }>(
      'SELECT seq, type, request_id, node FROM changes WHERE seq > $1 ORDER BY seq LIMIT $2',
      [cursor, BATCH],
    );
    for (const row of rows) {
      if (seen.has(row.seq)) continue;
      seen.add(row.seq);
      if (row.node !== node) deliver({ type: row.type, requestId: row.request_id ?? undefined });
    }
    while (seen.has(cursor + 1)) seen.delete(++cursor);
    if (seen.size === 0) {
      gapSince = null;
    } else if (gapSince === null) {
      gapSince = Date.now();
    } else if (Date.now() - gapSince > GAP_TIMEOUT_MS) {
      // The missing seq never committed: move past it to the next one read.
      cursor = Math.min(...seen) - 1;
      while (seen.has(cursor + 1)) seen.delete(++cursor);
      gapSince = seen.size ? Date.now() : null;
    }
    if (rows.length === BATCH) again = true;
  }

  function catchUp(): Promise<void> {
    if (reading) {
      again = true;
      return reading;
    }
    reading = (async () => {
      try {
        do {
          again = false;
          await readOnce();
        } while (again && !stopped);
      } catch (err) {
        log.warn({ err: String((err as Error).message ?? err) }, 'reading the change log failed; retrying');
      } finally {
        reading = null;
      }
    })();
    return reading;
  }

  async function listen() {
    if (stopped) return;
    const client = connect();
    client.on('error', (err) => {
      log.warn({ err: err.message }, 'change notifications connection lost; reconnecting');
      scheduleReconnect(client);
    });
    client.on('end', () => scheduleReconnect(client));
    // Notifications carry the id of the daemon that sent them: our own changes are not for us.
    client.on('notification', (msg) => {
      if (msg.payload !== node) void catchUp();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
      listener = client;
      backoff = 100;
      // Whatever committed while we were not listening.
      void catchUp();
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'cannot listen for change notifications; retrying');
      scheduleReconnect(client);
    }
  }

  function scheduleReconnect(client: pg.Client) {
    if (listener === client) listener = null;
    client.removeAllListeners('end');
    client.end().catch(() => {});
    if (stopped || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = null;
      void listen();
    }, backoff);
    reconnectTimer.unref();
    backoff = Math.min(backoff * 2, 5000);
  }

  return {
    async start() {
      const { rows } = await pool.query<{ seq: number | null }>('SELECT max(seq) AS seq FROM changes');
      cursor = rows[0]?.seq ?? 0;
      stopped = false;
      await listen();
      poller = setInterval(() => void catchUp(), pollMs);
      poller.unref();
    },
    subscribe(l: (change: Change) => void): () => void {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    /** Reads the change log now (tests; after a reconnect). */
    catchUp,
    async stop() {
      stopped = true;
      if (poller) clearInterval(poller);
      if (reconnectTimer) clearTimeout(reconnectTimer);
      const client = listener;
      listener = null;
      if (client) {
        client.removeAllListeners('end');
        await client.end().catch(() => {});
      }
      await reading;
    },
  };
}

import pg from 'pg';
import type { Logger } from 'pino';
import { CHANGES_LOST, type Change } from '../store.js';

export const CHANGES_CHANNEL = 'countersign_changes';

// A seq missing below ones already read belongs to a transaction still committing, or to one
// that rolled back (a permanent hole). It is given up on only once every transaction that was
// running when the gap was seen has ended (so the seq can no longer commit), and not before this.
const GAP_MIN_MS = 1000;
// The oldest transaction still running, and the first xid not yet assigned (txid_* for every
// supported PostgreSQL; epoch-extended, so they only grow).
const XMIN = 'SELECT txid_snapshot_xmin(txid_current_snapshot())::text AS xid';
const XMAX = 'SELECT txid_snapshot_xmax(txid_current_snapshot())::text AS xid';
const BATCH = 500;
// In-flight transactions hold a few seqs each: a jump wider than this (the sequence set by hand)
// waits only for the seqs this far below the row read.
const MAX_GAP = 10_000;
// How far below the newest seq a start looks for seqs still committing (a few per transaction in flight).
const START_WINDOW = 1000;
// The next changes and the pruned mark in one statement, so one snapshot: a prune (one statement
// too) is seen whole or not at all, never its deletes without its mark.
const READ = `SELECT (SELECT seq FROM changes_pruned WHERE id = 1) AS pruned, c.seq, c.type, c.request_id, c.node FROM (SELECT 1) one
  LEFT JOIN LATERAL (SELECT seq, type, request_id, node FROM changes WHERE seq > $1 OR seq = ANY($2::bigint[]) ORDER BY seq LIMIT $3) c ON true
  ORDER BY c.seq`;
const START = `SELECT (SELECT max(seq) FROM changes) AS newest, (SELECT seq FROM changes_pruned WHERE id = 1) AS pruned`;

export interface ChangeFeedOptions {
  pool: pg.Pool;
  /** A fresh dedicated connection for LISTEN. */
  connect: () => pg.Client;
  node: string;
  log: Logger;
  /** How often the change log is read even without a notification. */
  pollMs: number;
  /** The least time a missing seq is waited for (tests shorten it). */
  gapMinMs?: number;
}

/**
 * Other daemons' committed changes, in commit-ish order. NOTIFY (sent by a daemon after it
 * commits changes) wakes the feed at once; a poll every `pollMs` catches anything a notification
 * missed (a dropped LISTEN connection, a restart of PostgreSQL), so a wake-up is at worst late.
 * Changes are read by seq from the `changes` table; seqs taken by transactions that commit out
 * of order are waited for as long as their transaction runs, never skipped early. Rows are
 * pruned after a while (postgres-store.ts): a daemon that could not read for that long (a
 * partition, a suspended host) hears one `changes.lost` instead of what it missed, carrying when
 * it last read the whole log, and goes on from the newest pruned seq.
 */
export function createPostgresChangeFeed({ pool, connect, node, log, pollMs, gapMinMs = GAP_MIN_MS }: ChangeFeedOptions) {
  const listeners = new Set<(change: Change) => void>();
  /** The highest seq read. */
  let cursor = 0;
  /**
   * Seqs below the cursor not read yet, each with when it was first missed and, once missed
   * twice, the first xid assigned after that (`horizon`): its transaction has an xid below it.
   */
  const missing = new Map<number, { since: number; horizon: bigint | null }>();
  let reading: Promise<void> | null = null;
  let again = false;
  let listener: pg.Client | null = null;
  let stopped = false;
  let poller: ReturnType<typeof setInterval> | null = null;
  let reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  let backoff = 100;
  /** When the last read that reached the end of the log began: what had committed by then was read, but for seqs still awaited. */
  let heardAt = Date.now();

  function deliver(change: Change) {
    for (const l of listeners) {
      try {
        l(change);
      } catch (err) {
        log.error({ err }, 'a change listener failed');
      }
    }
  }

  const xid = async (sql: string) => BigInt((await pool.query<{ xid: string }>(sql)).rows[0]!.xid);

  async function readOnce() {
    const now = Date.now();
    // Asked before the read below, so a seq whose transaction has ended by now is either in that
    // read (it committed, however long its COMMIT took) or never will be (it rolled back).
    const waited = [...missing.values()].some((m) => m.horizon !== null && now - m.since > gapMinMs);
    const xmin = waited ? await xid(XMIN) : null;
    const gaps = [...missing.keys()];
    const { rows } = await pool.query<{ pruned: number | null; seq: number | null; type: string; request_id: string | null; node: string }>(READ, [
      cursor,
      gaps,
      BATCH,
    ]);
    const pruned = Number(rows[0]?.pruned ?? 0);
    let needed = cursor + 1;
    for (const seq of gaps) if (seq < needed) needed = seq;
    if (pruned >= needed) {
      // Rows this daemon had not read were pruned: what they said is unknown, so the listeners
      // resync from when the log was last read whole, and reading goes on above the mark.
      deliver({ type: CHANGES_LOST, since: heardAt });
      cursor = Math.max(cursor, pruned);
      for (const seq of gaps) if (seq <= pruned) missing.delete(seq);
    }
    let read = 0;
    for (const row of rows) {
      if (row.seq === null) continue;
      read++;
      if (row.seq > cursor) {
        for (let s = Math.max(cursor + 1, row.seq - MAX_GAP); s < row.seq; s++) missing.set(s, { since: now, horizon: null });
        cursor = row.seq;
      } else if (!missing.delete(row.seq)) continue;
      if (row.node !== node) deliver({ type: row.type, requestId: row.request_id ?? undefined });
    }
    let xmax: bigint | null = null;
    for (const [seq, m] of missing) {
      if (m.horizon === null) {
        if (m.since === now) continue;
        // Missed twice: whoever holds the seq has written its row, so it has an xid by now.
        m.horizon = xmax ??= await xid(XMAX);
      } else if (xmin !== null && xmin >= m.horizon && now - m.since > gapMinMs) {
        // Its transaction has ended and the seq was not in the read: it never committed.
        missing.delete(seq);
      }
    }
    if (read === BATCH) again = true;
    else heardAt = now;
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
      const startedAt = Date.now();
      const { rows } = await pool.query<{ newest: number | null; pruned: number | null }>(START);
      // Seqs at or below the mark are gone: nothing to wait for there.
      const pruned = Number(rows[0]?.pruned ?? 0);
      cursor = Math.max(Number(rows[0]?.newest ?? 0), pruned);
      // A seq below the newest that is not there yet belongs to a transaction still committing
      // while this daemon starts (or to one rolled back): waited for like any other gap.
      const { rows: recent } = await pool.query<{ seq: number }>('SELECT seq FROM changes WHERE seq > $1', [cursor - START_WINDOW]);
      const present = new Set(recent.map((r) => Number(r.seq)));
      const horizon = await xid(XMAX);
      const now = Date.now();
      for (let s = Math.max(1, pruned + 1, cursor - START_WINDOW + 1); s < cursor; s++) if (!present.has(s)) missing.set(s, { since: now, horizon });
      heardAt = startedAt;
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

import type { AttemptView, DeliveryFilter, DeliveryOutbox, DeliveryState, DeliveryView } from '../delivery-outbox.js';
import { placeholders, type SqlDialect, type SqlRunner } from './sql-runner.js';

interface DeliveryRow {
  id: string;
  request_id: string;
  type: string;
  hook: string | null;
  url: string;
  body: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: number | null;
  lease_until: number | null;
  created_at: number;
  finished_at: number | null;
  last_error: string | null;
}

const INTERRUPTED = 'the daemon stopped before the attempt finished';

/** The condition (appended with AND) that keeps the rows `filter` admits; null when it admits none. */
function admitted(filter: DeliveryFilter | undefined): { where: string; params: string[] } | null {
  if (!filter) return { where: '', params: [] };
  if (!filter.hooks) return filter.callbacks ? { where: ' AND hook IS NULL', params: [] } : null;
  const busy = filter.busyHooks;
  const notBusy = busy.length ? `hook NOT IN (${placeholders(busy.length)})` : '';
  if (!filter.callbacks) return { where: ` AND hook IS NOT NULL${notBusy ? ` AND ${notBusy}` : ''}`, params: [...busy] };
  return { where: notBusy ? ` AND (hook IS NULL OR ${notBusy})` : '', params: [...busy] };
}

/** The callback outbox over SQL (tables `callback_deliveries`, `callback_attempts`). */
export function createSqlDeliveryOutbox(sql: SqlRunner, dialect: SqlDialect): DeliveryOutbox {
  // With `node`, only while that daemon still holds the lease: one that lost it (taken back while
  // its attempt ran long) must not overwrite what the new holder does.
  const heldBy = (node: string | undefined) => (node === undefined ? '' : ' AND leased_by = ?');
  const holder = (node: string | undefined) => (node === undefined ? [] : [node]);

  async function release(id: string, at: number, error: string | null, node?: string) {
    const changed = await sql.run(
      `UPDATE callback_deliveries SET state = 'pending', lease_until = NULL, leased_by = NULL, next_attempt_at = ?, last_error = coalesce(?, last_error)
        WHERE id = ? AND state = 'leased'${heldBy(node)}`,
      [at, error, id, ...holder(node)],
    );
    return changed === 1;
  }

  async function views(query: string, params: unknown[]): Promise<DeliveryView[]> {
    const rows = await sql.all<DeliveryRow>(query, params);
    const out: DeliveryView[] = [];
    for (const row of rows) {
      const attempts = await sql.all<AttemptView>(
        'SELECT n, started_at, status, latency_ms, error_class, error FROM callback_attempts WHERE delivery_id = ? ORDER BY n',
        [row.id],
      );
      out.push({
        id: row.id,
        request_id: row.request_id,
        type: row.type,
        url: row.url,
        state: row.state,
        created_at: row.created_at,
        next_attempt_at: row.next_attempt_at,
        finished_at: row.finished_at,
        last_error: row.last_error,
        attempts,
      });
    }
    return out;
  }

  return {
    async insert(d) {
      await sql.run(
        `INSERT INTO callback_deliveries (id, request_id, type, hook, url, body, state, attempts, next_attempt_at, created_at)
          VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)`,
        [d.id, d.requestId, d.type, d.hook ?? null, d.url, d.body, d.createdAt, d.createdAt],
      );
    },

    async leaseDue(now, leaseUntil, node, filter) {
      const admit = admitted(filter);
      if (!admit) return undefined;
      // One statement: the row is picked and leased atomically, and a row another daemon is
      // leasing at this moment is skipped rather than waited for.
      const row = await sql.get<DeliveryRow>(
        `UPDATE callback_deliveries SET state = 'leased', lease_until = ?, leased_by = ?, next_attempt_at = NULL, attempts = attempts + 1
          WHERE id = (SELECT id FROM callback_deliveries WHERE state = 'pending' AND next_attempt_at <= ?${admit.where}
                      ORDER BY next_attempt_at, id LIMIT 1${dialect.skipLocked})
            AND state = 'pending'
          RETURNING id, request_id, type, hook, url, body, attempts, created_at`,
        [leaseUntil, node, now, ...admit.params],
      );
      if (!row) return undefined;
      await sql.run('INSERT INTO callback_attempts (delivery_id, n, started_at) VALUES (?, ?, ?)', [row.id, row.attempts, now]);
      return {
        id: row.id,
        requestId: row.request_id,
        type: row.type,
        hook: row.hook,
        url: row.url,
        body: row.body,
        createdAt: row.created_at,
        attempt: row.attempts,
      };
    },

    async endAttempt(id, n, end, node) {
      // Held means this daemon's lease on this very attempt: the same daemon may have leased the
      // row again after the attempt was taken over.
      const held =
        node === undefined ? '' : ` AND EXISTS (SELECT 1 FROM callback_deliveries WHERE id = ? AND state = 'leased' AND attempts = ?${heldBy(node)})`;
      const changed = await sql.run(
        `UPDATE callback_attempts SET status = ?, latency_ms = ?, error_class = ?, error = ? WHERE delivery_id = ? AND n = ?${held}`,
        [end.status, end.latencyMs === null ? null : Math.round(end.latencyMs), end.errorClass, end.error, id, n, ...(node === undefined ? [] : [id, n, node])],
      );
      return changed === 1;
    },

    async countedAttempts(id) {
      const row = await sql.get<{ n: number }>(
        `SELECT COUNT(*) AS n FROM callback_attempts WHERE delivery_id = ? AND (error_class IS NULL OR error_class <> 'interrupted')`,
        [id],
      );
      return Number(row?.n ?? 0);
    },

    release,

    async finish(id, state, at, error, node) {
      const changed = await sql.run(
        `UPDATE callback_deliveries SET state = ?, lease_until = NULL, leased_by = NULL, next_attempt_at = NULL, finished_at = ?, last_error = ?
          WHERE id = ? AND state = 'leased'${heldBy(node)}`,
        [state, at, error, id, ...holder(node)],
      );
      return changed === 1;
    },

    async reclaimAbandoned(now, liveNodes) {
      const alive = liveNodes?.length ? ` AND coalesce(leased_by, '') IN (${placeholders(liveNodes.length)})` : '';
      const rows = await sql.all<{ id: string }>(
        `SELECT id FROM callback_deliveries WHERE state = 'leased' AND NOT (lease_until > ?${alive})${dialect.skipLocked}`,
        [now, ...(liveNodes ?? [])],
      );
      for (const { id } of rows) {
        await sql.run(
          `UPDATE callback_attempts SET error_class = 'interrupted', error = ?
            WHERE delivery_id = ? AND latency_ms IS NULL AND error_class IS NULL AND status IS NULL`,
          [INTERRUPTED, id],
        );
        await release(id, now, null);
      }
      return rows.length;
    },

    async nextDue(filter) {
      const admit = admitted(filter);
      if (!admit) return null;
      const row = await sql.get<{ at: number | null }>(
        `SELECT MIN(next_attempt_at) AS at FROM callback_deliveries WHERE state = 'pending'${admit.where}`,
        admit.params,
      );
      return row?.at ?? null;
    },

    async nextLeaseEnd() {
      const row = await sql.get<{ at: number | null }>(`SELECT MIN(lease_until) AS at FROM callback_deliveries WHERE state = 'leased'`);
      return row?.at ?? null;
    },

    listForRequest: (requestId) => views('SELECT * FROM callback_deliveries WHERE request_id = ? AND hook IS NULL ORDER BY id', [requestId]),

    listForHook: (hook, limit) => views('SELECT * FROM callback_deliveries WHERE hook = ? ORDER BY id DESC LIMIT ?', [hook, limit]),
  };
}

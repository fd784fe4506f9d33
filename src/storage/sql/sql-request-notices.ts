import type { NoticeRecords, NoticeRow } from '../request-notices.js';
import type { SqlDialect, SqlRunner } from './sql-runner.js';

interface Row {
  request_id: string;
  remind_at: number | null;
  expiring_at: number | null;
}

const toNotice = (r: Row): NoticeRow => ({ requestId: r.request_id, remindAt: r.remind_at, expiringAt: r.expiring_at });

/** Reminder and expiring schedules over SQL (table `request_notices`). */
export function createSqlRequestNotices(sql: SqlRunner, dialect: SqlDialect): NoticeRecords {
  return {
    async schedule(n) {
      if (n.remindAt === null && n.expiringAt === null) return;
      await sql.run('INSERT INTO request_notices (request_id, remind_at, expiring_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [
        n.requestId,
        n.remindAt,
        n.expiringAt,
      ]);
    },
    async claimDue(now, limit) {
      const rows = await sql.all<Row>(
        `SELECT * FROM request_notices WHERE remind_at <= ? OR expiring_at <= ? ORDER BY request_id LIMIT ?${dialect.skipLocked}`,
        [now, now, limit],
      );
      return rows.map(toNotice);
    },
    async update(n) {
      if (n.remindAt === null && n.expiringAt === null) {
        await sql.run('DELETE FROM request_notices WHERE request_id = ?', [n.requestId]);
        return;
      }
      await sql.run('UPDATE request_notices SET remind_at = ?, expiring_at = ? WHERE request_id = ?', [n.remindAt, n.expiringAt, n.requestId]);
    },
    async remove(requestId) {
      await sql.run('DELETE FROM request_notices WHERE request_id = ?', [requestId]);
    },
    remindPending(now, everyMs) {
      // Integer division (bound numbers may arrive as REAL): the periods since creation that have begun by now.
      return sql.run(
        `INSERT INTO request_notices (request_id, remind_at, expiring_at)
         SELECT id, next, NULL FROM (SELECT id, expires_at, created_at + ((CAST(? AS BIGINT) - created_at) / CAST(? AS BIGINT) + 1) * CAST(? AS BIGINT) AS next FROM requests WHERE status = 'pending') p
         WHERE expires_at IS NULL OR next < expires_at
         ON CONFLICT (request_id) DO UPDATE SET remind_at = excluded.remind_at WHERE request_notices.remind_at IS NULL`,
        [now, everyMs, everyMs],
      );
    },
    async nextDue() {
      const row = await sql.get<{ r: number | null; e: number | null }>('SELECT MIN(remind_at) AS r, MIN(expiring_at) AS e FROM request_notices');
      const times = [row?.r, row?.e].filter((t): t is number => t !== null && t !== undefined).map(Number);
      return times.length ? Math.min(...times) : null;
    },
  };
}

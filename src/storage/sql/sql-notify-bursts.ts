import type { BurstRecords, BurstWindow } from '../notify-bursts.js';
import type { SqlDialect, SqlRunner } from './sql-runner.js';

interface Row {
  hook: string;
  agent: string;
  session: string;
  window_end: number;
  sent: number;
  held: number;
  latest_request_id: string | null;
}

const toWindow = (r: Row): BurstWindow => ({
  hook: r.hook,
  agent: r.agent,
  session: r.session,
  windowEnd: Number(r.window_end),
  sent: Number(r.sent),
  held: Number(r.held),
  latestRequestId: r.latest_request_id,
});

/** Burst windows over SQL (table `notify_bursts`). */
export function createSqlNotifyBursts(sql: SqlRunner, dialect: SqlDialect): BurstRecords {
  return {
    async lock(hook, agent, session) {
      // Insert-if-absent first, so two daemons meeting a new source both end up on one row.
      await sql.run('INSERT INTO notify_bursts (hook, agent, session, window_end, sent, held) VALUES (?, ?, ?, 0, 0, 0) ON CONFLICT DO NOTHING', [
        hook,
        agent,
        session,
      ]);
      const row = await sql.get<Row>(`SELECT * FROM notify_bursts WHERE hook = ? AND agent = ? AND session = ?${dialect.forUpdate}`, [hook, agent, session]);
      return toWindow(row!);
    },
    async save(w) {
      await sql.run('UPDATE notify_bursts SET window_end = ?, sent = ?, held = ?, latest_request_id = ? WHERE hook = ? AND agent = ? AND session = ?', [
        w.windowEnd,
        w.sent,
        w.held,
        w.latestRequestId,
        w.hook,
        w.agent,
        w.session,
      ]);
    },
    async claimEnded(now, limit) {
      const rows = await sql.all<Row>(`SELECT * FROM notify_bursts WHERE held > 0 AND window_end <= ? ORDER BY window_end LIMIT ?${dialect.skipLocked}`, [
        now,
        limit,
      ]);
      return rows.map(toWindow);
    },
    async nextSummaryAt() {
      const row = await sql.get<{ at: number | null }>('SELECT MIN(window_end) AS at FROM notify_bursts WHERE held > 0');
      return row?.at ?? null;
    },
  };
}

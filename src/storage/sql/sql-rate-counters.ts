import type { RateCounters } from '../rate-counters.js';
import type { SqlRunner } from './sql-runner.js';

/**
 * Rate counters over SQL (table `rate_events`, one row per counted event), shared by every
 * daemon on the database: an exact rolling window, as in one process. Two daemons taking the
 * last place at the same moment may both pass (the spec allows ±10 %). Rows that left every
 * window are pruned by the store's maintenance.
 */
export function createSqlRateCounters(sql: SqlRunner): RateCounters {
  return {
    async take(key, limit, windowMs, now) {
      if (limit <= 0) return true;
      const row = await sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM rate_events WHERE key = ? AND at > ?', [key, now - windowMs]);
      if (Number(row?.n ?? 0) >= limit) return false;
      await sql.run('INSERT INTO rate_events (key, at) VALUES (?, ?)', [key, now]);
      return true;
    },
  };
}

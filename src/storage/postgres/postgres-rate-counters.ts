import type { RateCounters } from '../rate-counters.js';
import type { SqlRunner } from '../sql/sql-runner.js';

/**
 * Rate counters in PostgreSQL (table `rate_events`, one row per counted event), shared by every
 * daemon on the database: an exact rolling window, as in one process. One call of
 * `countersign_rate_take` (migrations/postgres) takes a transaction-scoped advisory lock on the
 * key, counts and inserts, so concurrent takes on several daemons queue on the key and never
 * pass the limit together. Rows that left every window are pruned by the store's maintenance.
 */
export function createPostgresRateCounters(sql: SqlRunner): RateCounters {
  return {
    async take(key, limit, windowMs, now) {
      if (limit <= 0) return true;
      const row = await sql.get<{ taken: boolean }>('SELECT countersign_rate_take(?, ?, ?, ?) AS taken', [key, limit, now - windowMs, now]);
      return row?.taken === true;
    },
  };
}

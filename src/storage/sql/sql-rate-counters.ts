import type { RateCounters } from '../rate-counters.js';
import type { SqlRunner } from './sql-runner.js';

const BUCKET_MS = 1000;

/**
 * Rate counters over SQL (table `rate_buckets`), shared by every daemon on the database: events
 * are counted in one-second buckets, and a bucket counts while any part of it lies inside the
 * window, so the limit holds to within a second. Concurrent takes on several daemons may both
 * pass at the very edge of the limit (the spec allows ±10 %). Old buckets are pruned by the
 * store's maintenance.
 */
export function createSqlRateCounters(sql: SqlRunner): RateCounters {
  return {
    async take(key, limit, windowMs, now) {
      if (limit <= 0) return true;
      const bucket = now - (now % BUCKET_MS);
      const oldest = now - windowMs - BUCKET_MS + 1;
      const row = await sql.get<{ n: number | null }>('SELECT SUM(count) AS n FROM rate_buckets WHERE key = ? AND bucket >= ?', [key, oldest - (oldest % BUCKET_MS)]);
      if (Number(row?.n ?? 0) >= limit) return false;
      await sql.run(
        'INSERT INTO rate_buckets (key, bucket, count) VALUES (?, ?, 1) ON CONFLICT (key, bucket) DO UPDATE SET count = rate_buckets.count + 1',
        [key, bucket],
      );
      return true;
    },
  };
}

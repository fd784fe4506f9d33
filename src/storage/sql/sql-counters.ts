import type { Counters } from '../counters.js';
import type { SqlRunner } from './sql-runner.js';

/** Named counters over SQL (table `counters`); the upsert holds the row for the transaction. */
export function createSqlCounters(sql: SqlRunner): Counters {
  return {
    async next(name) {
      const row = await sql.get<{ value: number }>(
        'INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = counters.value + 1 RETURNING value',
        [name],
      );
      return Number(row!.value);
    },
  };
}

import type { Db } from './database.js';

/**
 * Named counters that survive restarts (table `counters`). `next` must run inside the caller's
 * write transaction, so a number is only used up when the transaction that needed it commits.
 */
export function createCounterRepository(db: Db) {
  const bump = db.prepare(
    'INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = value + 1 RETURNING value',
  );
  return {
    /** The next value of counter `name`: 1, 2, 3, … */
    next(name: string): number {
      return (bump.get(name) as { value: number }).value;
    },
  };
}

export type CounterRepository = ReturnType<typeof createCounterRepository>;

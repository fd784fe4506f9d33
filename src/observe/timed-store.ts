import { performance } from 'node:perf_hooks';
import type { Store, WriteOptions, WriteTx } from '../storage/store.js';

export type TransactionOutcome = 'commit' | 'rollback';

/**
 * The store, with every `write` timed from the call until it has committed or failed: what the
 * caller waits, so SQLite's queue for the write lock (group commit) and PostgreSQL's wait for a
 * pooled connection are included.
 */
export function timeStoreWrites(
  store: Store,
  observe: (seconds: number, outcome: TransactionOutcome) => void,
  now: () => number = () => performance.now(),
): Store {
  return {
    ...store,
    async write<T>(work: (tx: WriteTx) => Promise<T>, options?: WriteOptions): Promise<T> {
      const started = now();
      let outcome: TransactionOutcome = 'rollback';
      try {
        const value = await store.write(work, options);
        outcome = 'commit';
        return value;
      } finally {
        observe((now() - started) / 1000, outcome);
      }
    },
  };
}

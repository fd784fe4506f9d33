import type { Db } from './database.js';

interface Op {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  ok: boolean;
  value?: unknown;
  error?: unknown;
  after: Array<() => void>;
}

/**
 * Group commit. With synchronous=FULL every COMMIT waits for an fsync, and that wait, not the
 * SQL, bounds how many requests per second one SQLite file takes. Writes handed to `run` in the
 * same event-loop turn share one BEGIN IMMEDIATE transaction (one fsync); each runs in its own
 * savepoint, so a write that throws rolls back alone. Nobody is answered, and no
 * `afterCommit` callback runs, before the shared COMMIT has returned: an acknowledged write is
 * as durable as one committed on its own.
 */
export function createWriteBatcher(db: Db) {
  let queue: Op[] = [];
  let current: Op | null = null;
  // Nested inside the batch's transaction, better-sqlite3 runs this as a SAVEPOINT.
  const savepoint = db.transaction((fn: () => unknown) => fn());
  // Built once: db.transaction() creates four wrapper functions, and flush runs per write burst.
  const batch = db.transaction((ops: Op[]) => {
    for (const op of ops) {
      current = op;
      try {
        op.value = savepoint(op.fn);
        op.ok = true;
      } catch (err) {
        op.error = err;
        op.after = [];
      } finally {
        current = null;
      }
    }
  });

  function flush() {
    const ops = queue;
    queue = [];
    try {
      batch.immediate(ops);
    } catch (err) {
      // The shared COMMIT itself failed: nothing in this batch is durable.
      for (const op of ops) {
        op.ok = false;
        op.error = err;
        op.after = [];
      }
    }
    for (const op of ops) {
      for (const cb of op.after) cb();
      if (op.ok) op.resolve(op.value);
      else op.reject(op.error);
    }
  }

  return {
    /** Runs `fn` (synchronous, writing through this db) in the next shared transaction. */
    run<T>(fn: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ fn, resolve: resolve as (v: unknown) => void, reject, ok: false, after: [] });
      });
    },

    /**
     * Runs `cb` once the surrounding write is committed: at once outside a batch (the caller's
     * own transaction has already committed), after the shared COMMIT inside one, and never if
     * the write rolls back.
     */
    afterCommit(cb: () => void): void {
      if (current) current.after.push(cb);
      else cb();
    },
  };
}

export type WriteBatcher = ReturnType<typeof createWriteBatcher>;

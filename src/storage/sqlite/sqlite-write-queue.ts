import type Database from 'better-sqlite3';

export interface QueuedWrite<Tx> {
  /** The transaction handle this write's work receives. */
  tx: Tx;
  /** Callbacks registered through `tx`, run after COMMIT, dropped if the write rolls back. */
  after: Array<() => void>;
}

interface Op<Tx> extends QueuedWrite<Tx> {
  work: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  ok: boolean;
  value?: unknown;
  error?: unknown;
}

/**
 * Group commit. With synchronous=FULL every COMMIT waits for an fsync, and that wait, not the
 * SQL, bounds how many writes per second one SQLite file takes. Writes queued in the same
 * event-loop turn share one BEGIN IMMEDIATE transaction (one fsync); each runs in its own
 * savepoint, so a write that throws rolls back alone. Writes run one after another, never
 * interleaved; nobody is answered, and no after-commit callback runs, before the shared COMMIT
 * has returned: an acknowledged write is as durable as one committed on its own.
 */
export function createSqliteWriteQueue<Tx>(db: Database.Database, makeTx: (write: QueuedWrite<Tx>) => Tx, onCallbackError: (err: unknown) => void) {
  const stmts = {
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
    savepoint: db.prepare('SAVEPOINT write'),
    release: db.prepare('RELEASE write'),
    rollbackTo: db.prepare('ROLLBACK TO write'),
  };
  let queue: Op<Tx>[] = [];
  let flushing = false;
  let scheduled = false;

  async function runOne(op: Op<Tx>, savepoint: boolean) {
    if (savepoint) stmts.savepoint.run();
    try {
      op.value = await op.work(op.tx);
      if (savepoint) stmts.release.run();
      op.ok = true;
    } catch (err) {
      // SQLite rolls the whole transaction back by itself on some errors (a full disk): then
      // there is no savepoint left, and flushBatch fails the batch.
      if (savepoint && db.inTransaction) {
        stmts.rollbackTo.run();
        stmts.release.run();
      }
      op.error = err;
      op.after.length = 0;
    }
  }

  function failAll(ops: Op<Tx>[], err: unknown) {
    for (const op of ops) {
      op.ok = false;
      op.error = err;
      op.after.length = 0;
    }
  }

  async function flushBatch(ops: Op<Tx>[]) {
    try {
      stmts.begin.run();
    } catch (err) {
      failAll(ops, err);
      return;
    }
    // A lone write needs no savepoint: if it throws, the whole transaction rolls back.
    const alone = ops.length === 1;
    for (const op of ops) {
      await runOne(op, !alone);
      if (!db.inTransaction) {
        failAll(ops, op.error ?? new Error('the write transaction was rolled back'));
        return;
      }
    }
    try {
      if (alone && !ops[0]!.ok) stmts.rollback.run();
      else stmts.commit.run();
    } catch (err) {
      // The shared COMMIT itself failed: nothing in this batch is durable.
      if (db.inTransaction) stmts.rollback.run();
      failAll(ops, err);
    }
  }

  async function flush() {
    scheduled = false;
    flushing = true;
    try {
      while (queue.length) {
        const ops = queue;
        queue = [];
        await flushBatch(ops);
        for (const op of ops) {
          for (const cb of op.after) {
            try {
              cb();
            } catch (err) {
              onCallbackError(err);
            }
          }
          if (op.ok) op.resolve(op.value);
          else op.reject(op.error);
        }
      }
    } finally {
      flushing = false;
    }
  }

  return {
    write<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const op = { work, resolve, reject, ok: false, after: [] } as unknown as Op<Tx>;
        op.tx = makeTx(op);
        queue.push(op);
        if (!flushing && !scheduled) {
          scheduled = true;
          setImmediate(() => void flush());
        }
      });
    },
    /** True while a batch is being written (for shutdown). */
    busy: () => flushing || scheduled,
  };
}

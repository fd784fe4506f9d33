import type Database from 'better-sqlite3';
import { AppError } from '../../lib/errors.js';
import type { WriteOptions } from '../store.js';

export interface QueuedWrite<Tx> {
  /** The transaction handle this write's work receives. */
  tx: Tx;
  /** Callbacks registered through `tx`, run after COMMIT, dropped if the write rolls back. */
  after: Array<() => void>;
}

interface Op<Tx> extends QueuedWrite<Tx> {
  work: (tx: Tx) => Promise<unknown>;
  /** false: answered at COMMIT, without a sync of its own (store.ts, WriteOptions). */
  durable: boolean;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  ok: boolean;
  value?: unknown;
  error?: unknown;
}

/**
 * Group commit. A durable commit waits for an fsync, and that wait, not the SQL, bounds how many
 * writes per second one SQLite file takes. Writes queued in the same event-loop turn share one
 * BEGIN IMMEDIATE transaction (one fsync); each runs in its own savepoint, so a write that throws
 * rolls back alone. Writes run one after another, never interleaved; nobody is answered, and no
 * after-commit callback runs, before the shared COMMIT has returned and, with `syncCommitted`,
 * before that has resolved: an acknowledged write is as durable as one committed on its own.
 *
 * `syncCommitted` makes what COMMIT wrote durable off the event loop (wal-file-sync.ts); the
 * next batch starts once it has. Until then the batch is visible to reads on this connection
 * but not yet durable, so reads wait for it: `unsynced()` is the promise they wait on. A batch
 * that changed no row appended nothing to the WAL: it is answered at its COMMIT, and so is a
 * batch of writes that are not `durable` (store.ts): the next sync, a later batch's or the
 * checkpointer's, makes their WAL frames durable with whatever follows them. A failed
 * sync fails its batch and every write after it (the kernel may have dropped the pages it could
 * not write, and a later fsync would not say so): the daemon must restart, and SQLite's recovery
 * then keeps exactly what reached the disk.
 */
export function createSqliteWriteQueue<Tx>(
  db: Database.Database,
  makeTx: (write: QueuedWrite<Tx>) => Tx,
  onCallbackError: (err: unknown) => void,
  syncCommitted?: () => Promise<void>,
  /** Called before each BEGIN IMMEDIATE: whatever else holds a transaction on `db` ends it. */
  beforeBegin: () => void = () => {},
) {
  const stmts = {
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
    savepoint: db.prepare('SAVEPOINT write'),
    release: db.prepare('RELEASE write'),
    rollbackTo: db.prepare('ROLLBACK TO write'),
    // Rows this connection has inserted, updated or deleted so far (its writes are DML only).
    changes: db.prepare('SELECT total_changes()').pluck(),
  };
  let queue: Op<Tx>[] = [];
  let flushing = false;
  let scheduled = false;
  /** The flush scheduled or running, settled when it has answered every write it took. */
  let running: Promise<void> = Promise.resolve();
  /** The sync of the last COMMIT, while it runs. */
  let syncing: Promise<void> | null = null;
  /** Set once a sync has failed: no write is accepted after it. */
  let syncFailure: AppError | null = null;

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

  /** Commits the batch; whether it may have written anything (a batch that changed no row appended nothing to the WAL). */
  async function flushBatch(ops: Op<Tx>[]): Promise<boolean> {
    const before = stmts.changes.get() as number;
    try {
      beforeBegin();
      stmts.begin.run();
    } catch (err) {
      failAll(ops, err);
      return false;
    }
    // A lone write needs no savepoint: if it throws, the whole transaction rolls back.
    const alone = ops.length === 1;
    for (const op of ops) {
      await runOne(op, !alone);
      if (!db.inTransaction) {
        failAll(ops, op.error ?? new Error('the write transaction was rolled back'));
        return false;
      }
    }
    try {
      if (alone && !ops[0]!.ok) stmts.rollback.run();
      else stmts.commit.run();
    } catch (err) {
      // The shared COMMIT itself failed: nothing in this batch is durable.
      if (db.inTransaction) stmts.rollback.run();
      failAll(ops, err);
      return false;
    }
    return stmts.changes.get() !== before;
  }

  async function syncBatch(ops: Op<Tx>[], sync: () => Promise<void>) {
    const done = sync().catch((err: unknown) => {
      syncFailure = new AppError(
        'storage_unavailable',
        'the database could not be flushed to disk; no write is accepted until the daemon restarts',
        undefined,
        { cause: err },
      );
      throw syncFailure;
    });
    syncing = done;
    try {
      await done;
    } catch (err) {
      failAll(ops, err);
    } finally {
      syncing = null;
    }
  }

  async function flush() {
    scheduled = false;
    flushing = true;
    try {
      while (queue.length) {
        const ops = queue;
        queue = [];
        // Writes queued while a failing sync ran are refused like the ones after it.
        // A batch that changed nothing (a lease that found no row due) has nothing to make
        // durable, and one of writes that need not be has nothing that must: it neither waits
        // for a sync nor holds the next batch behind one.
        const wrote = syncFailure ? (failAll(ops, syncFailure), false) : await flushBatch(ops);
        if (syncCommitted && wrote && ops.some((op) => op.ok && op.durable)) await syncBatch(ops, syncCommitted);
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
    write<T>(work: (tx: Tx) => Promise<T>, { durable = true }: WriteOptions = {}): Promise<T> {
      if (syncFailure) return Promise.reject(syncFailure);
      return new Promise<T>((resolve, reject) => {
        const op = { work, durable, resolve, reject, ok: false, after: [] } as unknown as Op<Tx>;
        op.tx = makeTx(op);
        queue.push(op);
        if (!flushing && !scheduled) {
          scheduled = true;
          running = new Promise((done) => setImmediate(() => void flush().finally(done)));
        }
      });
    },
    /** Resolves once every write queued so far has been answered (before closing the connection). */
    async idle() {
      while (flushing || scheduled) await running;
    },
    /** The sync reads must wait for before answering (they may have seen its batch), or null. */
    unsynced: () => syncing,
    /** Why writes are refused, once a sync has failed. */
    failure: () => syncFailure,
  };
}

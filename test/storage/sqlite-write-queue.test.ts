import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteWriteQueue, type QueuedWrite } from '../../src/storage/sqlite/sqlite-write-queue.js';

interface Tx {
  insert(v: string): Promise<void>;
  has(v: string): Promise<boolean>;
  afterCommit(cb: () => void): void;
}

/** A write queue over `db` whose writes insert into and read table `t`. */
function queueOver(db: Database.Database, onCallbackError: (err: unknown) => void, sync?: () => Promise<void>) {
  return createSqliteWriteQueue<Tx>(
    db,
    (write: QueuedWrite<Tx>) => ({
      insert: async (v) => void db.prepare('INSERT INTO t (v) VALUES (?)').run(v),
      has: async (v) => db.prepare('SELECT 1 FROM t WHERE v = ?').get(v) !== undefined,
      afterCommit: (cb) => void write.after.push(cb),
    }),
    onCallbackError,
    sync,
  );
}

describe('SQLite write queue (group commit)', () => {
  let dir: string;
  let db: Database.Database;
  let other: Database.Database;
  let statements: string[];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-batch-'));
    statements = [];
    db = new Database(join(dir, 'db.sqlite'), { verbose: (sql) => statements.push(String(sql)) });
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v TEXT UNIQUE)');
    // A second connection sees only what is committed.
    other = new Database(join(dir, 'db.sqlite'));
    statements.length = 0;
  });
  afterEach(() => {
    db.close();
    other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const errors: unknown[] = [];
  const queue = () => queueOver(db, (err) => errors.push(err));
  const committed = () => (other.prepare('SELECT v FROM t ORDER BY v').all() as Array<{ v: string }>).map((r) => r.v);

  it('commits writes queued in one event-loop turn in a single BEGIN IMMEDIATE transaction', async () => {
    const q = queue();
    await Promise.all([q.write((tx) => tx.insert('a')), q.write((tx) => tx.insert('b')), q.write((tx) => tx.insert('c'))]);
    expect(statements.filter((s) => s === 'BEGIN IMMEDIATE')).toHaveLength(1);
    expect(statements.filter((s) => s === 'COMMIT')).toHaveLength(1);
    expect(committed()).toEqual(['a', 'b', 'c']);
  });

  it('rolls back a failing write alone and rejects only its caller', async () => {
    const q = queue();
    const results = await Promise.allSettled([q.write((tx) => tx.insert('a')), q.write((tx) => tx.insert('a')), q.write((tx) => tx.insert('b'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/);
    expect(committed()).toEqual(['a', 'b']);
  });

  it('rolls back a lone write that throws after writing', async () => {
    const q = queue();
    await expect(
      q.write(async (tx) => {
        await tx.insert('x');
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(committed()).toEqual([]);
    expect(db.inTransaction).toBe(false);
  });

  it('runs afterCommit callbacks only after the shared COMMIT, and never for a rolled-back write', async () => {
    const q = queue();
    const seen: Array<[string, string[]]> = [];
    const write = (v: string) =>
      q.write(async (tx) => {
        await tx.insert(v);
        tx.afterCommit(() => seen.push([v, committed()]));
        return v;
      });
    await Promise.allSettled([write('a'), write('a'), write('b')]);
    // Each callback already sees both rows committed; the duplicate's callback never ran.
    expect(seen).toEqual([
      ['a', ['a', 'b']],
      ['b', ['a', 'b']],
    ]);
  });

  it('keeps going when an after-commit callback throws', async () => {
    const q = queue();
    errors.length = 0;
    const value = await q.write(async (tx) => {
      tx.afterCommit(() => {
        throw new Error('listener bug');
      });
      return 'ok';
    });
    expect(value).toBe('ok');
    expect(errors).toHaveLength(1);
  });

  it('later writes in a batch see the earlier ones (dedupe inside one batch stays exact)', async () => {
    const q = queue();
    const insertOnce = (v: string) => q.write(async (tx) => ((await tx.has(v)) ? 'existing' : (await tx.insert(v), 'created')));
    const results = await Promise.all([insertOnce('x'), insertOnce('x')]);
    expect(results).toEqual(['created', 'existing']);
    expect(committed()).toEqual(['x']);
  });

  it('runs writes queued while a batch is open in the next transaction, never interleaved', async () => {
    const q = queue();
    const order: string[] = [];
    let second: Promise<unknown> | undefined;
    await q.write(async (tx) => {
      order.push('first:start');
      second = q.write(async (tx2) => {
        order.push('second');
        await tx2.insert('b');
      });
      await tx.insert('a');
      order.push('first:end');
    });
    await second;
    expect(order).toEqual(['first:start', 'first:end', 'second']);
    expect(statements.filter((s) => s === 'BEGIN IMMEDIATE')).toHaveLength(2);
    expect(committed()).toEqual(['a', 'b']);
  });
});

describe('SQLite write queue with the commit synced off the event loop', () => {
  let dir: string;
  let db: Database.Database;
  let other: Database.Database;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-sync-'));
    db = new Database(join(dir, 'db.sqlite'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE t (v TEXT UNIQUE)');
    other = new Database(join(dir, 'db.sqlite'));
  });
  afterEach(() => {
    db.close();
    other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A sync the test finishes by hand: `pending` counts the ones started and not finished. */
  function manualSync() {
    const waiting: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
    return {
      sync: () => new Promise<void>((resolve, reject) => void waiting.push({ resolve, reject })),
      pending: () => waiting.length,
      finish: () => waiting.shift()!.resolve(),
      fail: (err: Error) => waiting.shift()!.reject(err),
    };
  }
  const turn = () => new Promise((r) => setImmediate(r));
  const queueWith = (sync: () => Promise<void>) => queueOver(db, () => {}, sync);
  const committed = () => (other.prepare('SELECT v FROM t ORDER BY v').all() as Array<{ v: string }>).map((r) => r.v);

  it('answers a write and runs its after-commit callbacks only once the sync after its COMMIT has finished', async () => {
    const disk = manualSync();
    const q = queueWith(disk.sync);
    const events: string[] = [];
    const done = q
      .write(async (tx) => {
        await tx.insert('a');
        tx.afterCommit(() => events.push('after-commit'));
      })
      .then(() => events.push('answered'));
    await turn();
    await turn();
    // Committed (another connection sees it), being synced, nobody told yet.
    expect(committed()).toEqual(['a']);
    expect(disk.pending()).toBe(1);
    expect(q.unsynced()).not.toBeNull();
    expect(events).toEqual([]);
    disk.finish();
    await done;
    expect(events).toEqual(['after-commit', 'answered']);
    expect(q.unsynced()).toBeNull();
  });

  it('starts the next batch only after the sync of the one before', async () => {
    const disk = manualSync();
    const q = queueWith(disk.sync);
    const first = q.write((tx) => tx.insert('a'));
    await turn();
    const second = q.write((tx) => tx.insert('b'));
    await turn();
    await turn();
    expect(committed()).toEqual(['a']);
    disk.finish();
    await first;
    await turn();
    expect(committed()).toEqual(['a', 'b']);
    disk.finish();
    await second;
  });

  it('is idle only once the last batch is synced and answered (the store closes after that)', async () => {
    const disk = manualSync();
    const q = queueWith(disk.sync);
    let answered = false;
    void q.write((tx) => tx.insert('a')).then(() => (answered = true));
    let idle = false;
    const waiting = q.idle().then(() => (idle = true));
    await turn();
    await turn();
    expect(disk.pending()).toBe(1);
    expect(idle).toBe(false);
    disk.finish();
    await waiting;
    expect(answered).toBe(true);
    await q.idle();
  });

  it('does not sync a batch that committed nothing', async () => {
    const disk = manualSync();
    const q = queueWith(disk.sync);
    await expect(q.write(async () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(disk.pending()).toBe(0);
  });

  it('answers a batch whose writes changed no row at its COMMIT, without a sync, and syncs the next one that does', async () => {
    const disk = manualSync();
    const q = queueWith(disk.sync);
    // Only reads, and an update that matches nothing: nothing reaches the WAL.
    const found = await q.write(async (tx) => {
      db.prepare("UPDATE t SET v = 'x' WHERE v = 'absent'").run();
      return tx.has('absent');
    });
    expect(found).toBe(false);
    expect(disk.pending()).toBe(0);
    let answered = false;
    const written = q.write((tx) => tx.insert('present')).then(() => (answered = true));
    await turn();
    await turn();
    expect(disk.pending()).toBe(1);
    expect(answered).toBe(false);
    disk.finish();
    await written;
    await q.idle();
  });

  it('answers a batch of writes that need not be durable at its COMMIT, without a sync; a batch with one durable write is synced', async () => {
    const disk = manualSync();
    const q = queueWith(disk.sync);
    let calledBack = false;
    await q.write(
      async (tx) => {
        await tx.insert('lazy');
        tx.afterCommit(() => (calledBack = true));
      },
      { durable: false },
    );
    expect(calledBack).toBe(true);
    expect(committed()).toEqual(['lazy']);
    expect(disk.pending()).toBe(0);
    expect(q.unsynced()).toBeNull();
    // Queued in one turn, the two share a batch: the durable one is answered after the sync,
    // which covers the other's frames too.
    let answered = 0;
    const both = Promise.all([
      q.write((tx) => tx.insert('lazy-2'), { durable: false }).then(() => answered++),
      q.write((tx) => tx.insert('durable')).then(() => answered++),
    ]);
    await turn();
    await turn();
    expect(disk.pending()).toBe(1);
    expect(answered).toBe(0);
    disk.finish();
    await both;
    expect(answered).toBe(2);
    await q.idle();
  });

  it('fails the batch whose sync failed, runs none of its callbacks, and refuses every later write', async () => {
    const disk = manualSync();
    const q = queueWith(disk.sync);
    let calledBack = false;
    const first = q.write(async (tx) => {
      await tx.insert('a');
      tx.afterCommit(() => (calledBack = true));
    });
    await turn();
    // Queued while the failing sync runs: refused too, and never written.
    const during = q.write((tx) => tx.insert('b'));
    await turn();
    disk.fail(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    await expect(first).rejects.toMatchObject({ code: 'storage_unavailable', status: 503 });
    await expect(during).rejects.toMatchObject({ code: 'storage_unavailable' });
    await expect(q.write((tx) => tx.insert('c'))).rejects.toMatchObject({ code: 'storage_unavailable' });
    expect(calledBack).toBe(false);
    expect(committed()).toEqual(['a']);
    expect(q.failure()?.message).toMatch(/could not be flushed to disk/);
    expect(disk.pending()).toBe(0);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeTransaction, type Db } from '../../src/db/database.js';
import { createWriteBatcher } from '../../src/db/write-batcher.js';

describe('write batcher (group commit)', () => {
  let dir: string;
  let db: Db;
  let other: Db;
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

  const insert = (v: string) => () => writeTransaction(db, () => db.prepare('INSERT INTO t (v) VALUES (?)').run(v));
  const committed = () => (other.prepare('SELECT v FROM t ORDER BY v').all() as Array<{ v: string }>).map((r) => r.v);

  it('commits writes made in one event-loop turn in a single BEGIN IMMEDIATE transaction', async () => {
    const batcher = createWriteBatcher(db);
    await Promise.all([batcher.run(insert('a')), batcher.run(insert('b')), batcher.run(insert('c'))]);
    expect(statements.filter((s) => s === 'BEGIN IMMEDIATE')).toHaveLength(1);
    expect(statements.filter((s) => s === 'COMMIT')).toHaveLength(1);
    expect(committed()).toEqual(['a', 'b', 'c']);
  });

  it('rolls back a failing write alone and rejects only its caller', async () => {
    const batcher = createWriteBatcher(db);
    const results = await Promise.allSettled([batcher.run(insert('a')), batcher.run(insert('a')), batcher.run(insert('b'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/);
    expect(committed()).toEqual(['a', 'b']);
  });

  it('runs afterCommit callbacks only after the shared COMMIT, and never for a rolled-back write', async () => {
    const batcher = createWriteBatcher(db);
    const seen: Array<[string, string[]]> = [];
    const write = (v: string) => () => {
      insert(v)();
      batcher.afterCommit(() => seen.push([v, committed()]));
      return v;
    };
    await Promise.allSettled([batcher.run(write('a')), batcher.run(write('a')), batcher.run(write('b'))]);
    // Each callback already sees both rows committed; the duplicate's callback never ran.
    expect(seen).toEqual([
      ['a', ['a', 'b']],
      ['b', ['a', 'b']],
    ]);
  });

  it('runs afterCommit at once outside a batch', () => {
    const batcher = createWriteBatcher(db);
    let ran = false;
    batcher.afterCommit(() => (ran = true));
    expect(ran).toBe(true);
  });

  it('later writes in a batch see the earlier ones (dedupe inside one batch stays exact)', async () => {
    const batcher = createWriteBatcher(db);
    const insertOnce = (v: string) => () =>
      writeTransaction(db, () => (db.prepare('SELECT 1 FROM t WHERE v = ?').get(v) ? 'existing' : (db.prepare('INSERT INTO t (v) VALUES (?)').run(v), 'created')));
    const results = await Promise.all([batcher.run(insertOnce('x')), batcher.run(insertOnce('x'))]);
    expect(results).toEqual(['created', 'existing']);
    expect(committed()).toEqual(['x']);
  });
});

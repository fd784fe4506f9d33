import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSqliteCheckpointer } from '../../src/storage/sqlite/sqlite-checkpointer.js';

describe('SQLite checkpoints off the event loop', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-checkpoint-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // 20 transactions of about 400 KiB each, as a writer with automatic checkpoints off.
  function writeRounds(db: Database.Database, rounds: number, between: () => Promise<unknown>) {
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const round = db.transaction(() => {
      for (let i = 0; i < 100; i++) insert.run('x'.repeat(4000));
    });
    return (async () => {
      for (let r = 0; r < rounds; r++) {
        round();
        await between();
      }
    })();
  }
  function openWriter(path: string) {
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE t (v TEXT)');
    return db;
  }

  it('copies committed frames into the database file from a worker thread, so the WAL stays bounded', async () => {
    const path = join(dir, 'db.sqlite');
    const db = openWriter(path);
    const checkpointer = startSqliteCheckpointer(path, { synchronous: 'full', intervalMs: 60_000 });
    const results: Array<{ log: number; checkpointed: number }> = [];
    await writeRounds(db, 20, async () => results.push(await checkpointer.checkpoint()));
    // Every frame of every committed round was copied: nothing left for the WAL to hold.
    for (const r of results) expect(r.checkpointed).toBe(r.log);
    // The writer restarted the WAL from its start after each complete checkpoint: it holds about
    // one round, not twenty (8 MB).
    expect(statSync(`${path}-wal`).size).toBeLessThan(2 * 1024 * 1024);
    await checkpointer.stop();
    expect(db.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 2000 });
    db.close();
  });

  it('without it, the same writes leave the whole history in the WAL', async () => {
    const path = join(dir, 'db.sqlite');
    const db = openWriter(path);
    await writeRounds(db, 20, async () => {});
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(6 * 1024 * 1024);
    db.close();
  });

  it('runs on its own every interval', async () => {
    const path = join(dir, 'db.sqlite');
    const db = openWriter(path);
    const checkpointer = startSqliteCheckpointer(path, { synchronous: 'full', intervalMs: 20 });
    await writeRounds(db, 1, async () => {});
    // The database file itself grows only when a checkpoint copies the WAL's pages into it.
    while (statSync(path).size < 400_000) await new Promise((r) => setTimeout(r, 5));
    expect(statSync(path).size).toBeGreaterThan(400_000);
    await checkpointer.stop();
    db.close();
  });
  // The worker is unref'd so that it alone never keeps the daemon running; while someone waits
  // for its answer (close() at shutdown), it must. Otherwise a process with nothing else left to
  // do ended mid-close with exit code 13 (a top-level await that never settled), the database
  // left unclosed: the bench's history seed did, after any checkpoint had run.
  it('keeps the process alive while a caller waits for the worker, up to the end of stop()', () => {
    const path = join(dir, 'db.sqlite');
    openWriter(path).close();
    const compiled = resolve('dist/storage/sqlite/sqlite-checkpointer.js');
    const script = `
      const { startSqliteCheckpointer } = await import(${JSON.stringify(compiled)});
      const checkpointer = startSqliteCheckpointer(${JSON.stringify(path)}, { synchronous: 'normal', intervalMs: 60000 });
      await checkpointer.checkpoint();
      console.log('checkpointed');
      await checkpointer.stop();
      console.log('stopped');
    `;
    const file = join(dir, 'close.mjs');
    writeFileSync(file, script);
    const run = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 30_000 });
    expect({ status: run.status, stdout: run.stdout.trim().split('\n'), stderr: run.stderr }).toEqual({
      status: 0,
      stdout: ['checkpointed', 'stopped'],
      stderr: '',
    });
  });
});

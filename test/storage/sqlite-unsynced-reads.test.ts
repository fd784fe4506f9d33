import { existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteReadRunner } from '../../src/storage/sqlite/sqlite-runner.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { openWalFileSync } from '../../src/storage/sqlite/wal-file-sync.js';

describe('SQLite reads of a batch not yet synced', () => {
  let dir: string;
  let path: string;
  let writer: Database.Database;
  let reader: Database.Database;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-unsynced-'));
    path = join(dir, 'db.sqlite');
    writer = new Database(path);
    writer.pragma('journal_mode = WAL');
    writer.pragma('synchronous = NORMAL');
    writer.exec("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('a')");
    reader = new Database(path, { readonly: true });
  });
  afterEach(() => {
    reader.close();
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answer only once the sync running when they read has finished', async () => {
    let finish!: () => void;
    let syncing: Promise<void> | null = new Promise<void>((r) => (finish = r));
    const runner = createSqliteReadRunner(writer, reader, () => syncing);
    let answered: unknown;
    const read = runner.get<{ v: string }>('SELECT v FROM t').then((row) => (answered = row));
    const list = runner.all<{ v: string }>('SELECT v FROM t');
    await new Promise((r) => setImmediate(r));
    expect(answered).toBeUndefined();
    finish();
    syncing = null;
    await read;
    expect(answered).toEqual({ v: 'a' });
    expect(await list).toEqual([{ v: 'a' }]);
    // Nothing unsynced: answered at once.
    expect(await runner.get('SELECT v FROM t')).toEqual({ v: 'a' });
  });

  it('fail when that sync fails: what they read may never reach the disk', async () => {
    const failure = Object.assign(new Error('the database could not be flushed to disk'), { code: 'storage_unavailable' });
    const syncing = Promise.reject(failure);
    syncing.catch(() => {});
    const runner = createSqliteReadRunner(writer, reader, () => syncing);
    await expect(runner.get('SELECT v FROM t')).rejects.toBe(failure);
  });
});

describe('WAL file sync', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'countersign-walsync-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('syncs the database’s -wal file, and fails once closed', async () => {
    const path = join(dir, 'db.sqlite');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v TEXT)');
    expect(existsSync(`${path}-wal`)).toBe(true);
    const wal = openWalFileSync(path);
    db.prepare('INSERT INTO t VALUES (?)').run('x');
    await expect(wal.sync()).resolves.toBeUndefined();
    wal.close();
    await expect(wal.sync()).rejects.toMatchObject({ code: 'EBADF' });
    db.close();
  });

  it('syncs the -wal file beside the database a symbolic link points to, where SQLite keeps it', async () => {
    mkdirSync(join(dir, 'real'));
    const real = join(dir, 'real', 'db.sqlite');
    const link = join(dir, 'link.sqlite');
    symlinkSync(real, link);
    const db = new Database(link);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v TEXT)');
    expect(existsSync(`${real}-wal`)).toBe(true);
    const wal = openWalFileSync(link);
    await expect(wal.sync()).resolves.toBeUndefined();
    wal.close();
    db.close();
  });

  it('refuses a database without a -wal file (not in WAL mode) rather than syncing nothing', () => {
    const path = join(dir, 'db.sqlite');
    new Database(path).exec('CREATE TABLE t (v TEXT)').close();
    expect(() => openWalFileSync(path)).toThrow(/ENOENT/);
  });
});

/** How many descriptors this process has open on `file`. */
const openOn = (file: string) =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false;
    }
  }).length;

describe.skipIf(!existsSync('/proc/self/fd'))('the SQLite store and its WAL sync', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'countersign-walstore-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('with synchronous "full" holds the -wal file open to sync it, and lets it go on close; "normal" does not', async () => {
    const full = join(dir, 'full.db');
    const normal = join(dir, 'normal.db');
    const a = openSqliteStore(full, { synchronous: 'full' });
    const b = openSqliteStore(normal, { synchronous: 'normal' });
    // SQLite's own connections hold the same number of descriptors on each file; the sync one more.
    expect(openOn(`${full}-wal`) - openOn(`${normal}-wal`)).toBe(1);
    await a.close();
    await b.close();
    expect(openOn(`${full}-wal`)).toBe(0);
  });
});

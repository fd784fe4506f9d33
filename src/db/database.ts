import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';

export type Db = Database.Database;

export interface OpenDatabaseOptions {
  synchronous: 'full' | 'normal';
}

/**
 * Opens the SQLite file with the settings every write relies on: WAL, synchronous=FULL unless
 * the operator opted into NORMAL (which may lose the last commits on power loss), and a busy
 * timeout. Writes go through `db.transaction(fn).immediate()` so they never upgrade a read
 * lock (SQLITE_BUSY in WAL).
 */
export function openDatabase(path: string, { synchronous }: OpenDatabaseOptions): Db {
  restrictToOwner(path);
  const db = new Database(path, { timeout: 5000 });
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma('foreign_keys = ON');
  return db;
}

/**
 * The database holds every request, decision and token digest: owner-only (0600) whatever the
 * umask and however old the data directory. The file is created 0600 before SQLite opens it,
 * because SQLite gives the -wal and -shm files it creates the database file's mode; files an
 * older version left readable are tightened.
 */
function restrictToOwner(path: string) {
  if (path === ':memory:' || path === '') return;
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file)) chmodSync(file, 0o600);
  }
}

const runners = new WeakMap<Db, Database.Transaction<(fn: () => unknown) => unknown>>();

/**
 * Runs `fn` in a BEGIN IMMEDIATE transaction (a savepoint when one is already open, e.g. inside
 * a group commit) and returns its result.
 */
export function writeTransaction<T>(db: Db, fn: () => T): T {
  let run = runners.get(db);
  // One wrapper per database: better-sqlite3 builds four wrapper functions per transaction() call.
  if (!run) runners.set(db, (run = db.transaction((f: () => unknown) => f())));
  return run.immediate(fn) as T;
}

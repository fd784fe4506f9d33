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
  const db = new Database(path, { timeout: 5000 });
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma('foreign_keys = ON');
  return db;
}

/** Runs `fn` in a BEGIN IMMEDIATE transaction and returns its result. */
export function writeTransaction<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}

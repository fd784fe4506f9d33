import { closeSync, existsSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';

export class SqliteFileTakenError extends Error {
  override name = 'SqliteFileTakenError';
}

/**
 * Claims a SQLite database file for this process: one daemon per file. A second daemon on the
 * same file would run beside the first without hearing of its changes (a decision made there
 * wakes no long-poll, bridge socket or held hook call here) and take back its callback leases
 * as a dead run's. The claim is an exclusive lock on `<file>.lock`, held by a connection in
 * SQLite's exclusive locking mode until `release`; the operating system drops it when the
 * process dies, so a restart after a crash or `kill -9` is never refused.
 */
export function claimSqliteFile(path: string): { release(): void } {
  const lockPath = `${path}.lock`;
  // Owner-only, like the database beside it.
  if (!existsSync(lockPath)) closeSync(openSync(lockPath, 'a', 0o600));
  const db = new Database(lockPath, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    // The lock file holds no data: no journal file beside it.
    db.pragma('journal_mode = MEMORY');
    // In exclusive locking mode the lock a write transaction takes is kept after its end.
    db.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (err) {
    db.close();
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_BUSY')) {
      throw new SqliteFileTakenError(
        `another countersign daemon is using ${path}: one daemon per SQLite file (stop the other one, give this one its own data_dir, or share a PostgreSQL database between several with storage.url)`,
        { cause: err },
      );
    }
    throw err;
  }
  return { release: () => db.close() };
}

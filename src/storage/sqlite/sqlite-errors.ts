import { AppError } from '../../lib/errors.js';
import { RequestKeyTaken } from '../request-records.js';

/**
 * The database file locked by another process past the busy timeout (a backup tool, a second
 * daemon pointed at the same file), a full disk or a failed write of the file is 503
 * `storage_unavailable`, as an unreachable PostgreSQL is: nothing was written and the caller may
 * try again. Any other error passes through.
 */
export function sqliteStorageError(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return err;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new AppError('storage_unavailable', 'the database is locked by another process; try again shortly', undefined, { cause: err });
  }
  // The disk is full, or the file cannot be written: nothing of the write was kept (SQLite rolls
  // the transaction back), and the caller may try again once there is room.
  if (code.startsWith('SQLITE_FULL'))
    return new AppError('storage_unavailable', 'the disk holding the database is full; try again once there is room', undefined, { cause: err });
  if (code.startsWith('SQLITE_IOERR'))
    return new AppError('storage_unavailable', 'the database file cannot be written; try again shortly', undefined, { cause: err });
  return err;
}

// The unique indexes on a request's keys (migrations/sqlite/0001_init.sql, 0007).
const REQUEST_KEY = /UNIQUE constraint failed: requests\.(format, requests\.submitter, requests\.native_key|submitter, requests\.dedupe_key)$/;

/** A request's taken native or dedupe key (RequestRecords.add) is RequestKeyTaken; other errors pass through. */
export function requestKeyError(err: unknown): unknown {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e?.code !== 'SQLITE_CONSTRAINT_UNIQUE' || typeof e.message !== 'string' || !REQUEST_KEY.test(e.message)) return err;
  return new RequestKeyTaken({ cause: err });
}

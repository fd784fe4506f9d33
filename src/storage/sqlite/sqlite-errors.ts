import { AppError } from '../../lib/errors.js';

/**
 * The database file locked by another process past the busy timeout (a backup tool, a second
 * daemon pointed at the same file) is 503 `storage_unavailable`, as an unreachable PostgreSQL
 * is: nothing was written and the caller may try again. Any other error passes through.
 */
export function sqliteStorageError(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !(code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))) return err;
  return new AppError('storage_unavailable', 'the database is locked by another process; try again shortly', undefined, { cause: err });
}

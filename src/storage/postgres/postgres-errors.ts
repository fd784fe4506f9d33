import { AppError } from '../../lib/errors.js';
import { RequestKeyTaken } from '../request-records.js';

// Node's socket errors, and PostgreSQL's classes 08 (connection exception), 57P (operator
// intervention: the server is shutting down or starting up) and 53 (insufficient resources: too
// many connections, out of memory or disk), and 25006: a read-only transaction, what a standby
// answers a write with while a failover is under way. Each passes; none is the request's fault.
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const READ_ONLY = '25006';

/** Whether `err` means the database could not be reached (rather than that a statement failed). */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof AppError) return err.code === 'storage_unavailable';
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || code === READ_ONLY || ['08', '53', '57P'].some((c) => code.startsWith(c)))) return true;
  // pg reports a connection that died mid-query without a code.
  // pg reports a connection that died mid-query without a code, and one that went unanswered past query_timeout as a read timeout.
  return /Connection terminated|connection error|not queryable|timeout exceeded when trying to connect|Query read timeout/i.test(err.message);
}

/**
 * An unreachable database becomes 503 `storage_unavailable` with a fixed message (driver
 * messages may name hosts and users); any other error passes through unchanged.
 */
export function storageError(err: unknown): unknown {
  if (!isConnectionError(err) || err instanceof AppError) return err;
  return unavailable(err);
}

/** 503 `storage_unavailable`, in the one wording every caller gets. */
export function unavailable(cause?: unknown): AppError {
  return new AppError('storage_unavailable', 'the database is unavailable; try again shortly', undefined, cause === undefined ? undefined : { cause });
}

// The unique indexes on a request's keys (migrations/postgres/0001_init.sql, 0002).
const REQUEST_KEYS = new Set(['requests_native_key', 'requests_pending_dedupe']);

/** A request's taken native or dedupe key (RequestRecords.add) is RequestKeyTaken; other errors pass through. */
export function requestKeyError(err: unknown): unknown {
  const e = err as { code?: unknown; constraint?: unknown } | null;
  return e?.code === '23505' && typeof e.constraint === 'string' && REQUEST_KEYS.has(e.constraint) ? new RequestKeyTaken({ cause: err }) : err;
}

/**
 * The check of a transaction that relied on the policy state row its daemon knew failed: another
 * daemon changed the row since (countersign_expect_policy_state, migrations/postgres/0006).
 */
export function isPolicyStateChanged(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'CS001';
}

import type { AttemptOutcome } from './retry-policy.js';
import { BlockedAddressError } from './safe-dispatcher.js';

/** Abort reasons of an attempt's signal: its deadline passed, or the daemon is stopping. */
export const TIMEOUT = new Error('attempt deadline reached');
export const SHUTDOWN = new Error('shutting down');

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'ENODATA', 'EAI_NONAME']);

/** Maps a thrown error (possibly wrapped in `cause`s) to what the attempt means; `timeoutKey` names the limit that ran out. */
export function classifyError(err: unknown, signal: AbortSignal, timeoutKey = 'callbacks.timeout'): AttemptOutcome {
  if (signal.aborted && signal.reason === SHUTDOWN) return { kind: 'interrupted', error: 'the daemon stopped before the attempt finished' };
  if (signal.aborted && signal.reason === TIMEOUT)
    return { kind: 'retry', status: null, errorClass: 'timeout', error: `no response before ${timeoutKey}`, retryAfterMs: null };
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof BlockedAddressError)
      return { kind: 'fail', status: null, errorClass: 'address_not_allowed', error: e.message, reason: 'address_not_allowed' };
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && TIMEOUT_CODES.has(code))
      return { kind: 'retry', status: null, errorClass: 'timeout', error: e.message, retryAfterMs: null };
    if (typeof code === 'string' && DNS_CODES.has(code)) return { kind: 'retry', status: null, errorClass: 'dns', error: e.message, retryAfterMs: null };
  }
  const e = err as { message?: unknown; code?: unknown };
  const message = typeof e?.message === 'string' && e.message ? e.message : String(err);
  return { kind: 'retry', status: null, errorClass: 'network', error: typeof e?.code === 'string' ? `${e.code}: ${message}` : message, retryAfterMs: null };
}

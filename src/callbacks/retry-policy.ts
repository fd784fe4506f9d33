import type { AttemptErrorClass } from '../storage/delivery-outbox.js';

/**
 * The retry rules of callbacks (docs/callbacks.md) as pure functions: what an HTTP status means, when the next
 * attempt is due, and when to give up.
 */

/** Why a delivery ended in `failed` (the `reason` of its `callback.failed` audit row). */
export type FailReason =
  | 'rejected' // a 4xx other than 408, 410 and 429
  | 'gone' // 410: the receiver asked us to stop
  | 'redirect' // 3xx: never followed
  | 'url_not_allowed' // the callback_url no longer passes the allowlist/URL rules
  | 'address_not_allowed' // the address dialled is not allowed (SSRF defence)
  | 'retries_exhausted'
  | 'max_age'
  | 'hook_removed'; // the hook a queued delivery was for is no longer in the config

export type AttemptOutcome =
  | { kind: 'delivered'; status: number }
  | { kind: 'retry'; status: number | null; errorClass: AttemptErrorClass; error: string; retryAfterMs: number | null }
  | { kind: 'fail'; status: number | null; errorClass: AttemptErrorClass; error: string; reason: FailReason }
  | { kind: 'interrupted'; error: string };

/** Success is any 2xx; 408, 429 and 5xx are retried; 410 stops; 3xx and other codes fail at once. */
export function classifyStatus(status: number, retryAfter: string | undefined, now: number): AttemptOutcome {
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  const error = `HTTP ${status}`;
  if (status === 408 || status === 429 || status >= 500) {
    // Retry-After is defined for 429 and 503 (RFC 9110 §10.2.3); elsewhere it is ignored.
    const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(retryAfter, now) : null;
    return { kind: 'retry', status, errorClass: 'http_status', error, retryAfterMs };
  }
  const reason: FailReason = status === 410 ? 'gone' : status >= 300 && status < 400 ? 'redirect' : 'rejected';
  return { kind: 'fail', status, errorClass: 'http_status', error, reason };
}

/** `Retry-After` as delay-seconds or an HTTP date, in ms from `now`; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (value === undefined) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  // HTTP dates (IMF-fixdate and the two obsolete forms) all name a weekday and carry hh:mm:ss;
  // this keeps Date.parse from reading "-5" or "2" as a year.
  if (!/^[A-Za-z]{3}/.test(v) || !/\d{2}:\d{2}:\d{2}/.test(v)) return null;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

/** `ms` moved by up to ±20 %, `random` in [0, 1): 0.5 leaves it unchanged. */
export function jitter(ms: number, random: () => number): number {
  return Math.round(ms * (0.8 + 0.4 * random()));
}

export interface PlanInput {
  /** Attempts made so far that count (interrupted ones do not), this one included. */
  counted: number;
  /** The configured delays between attempts (ms): one attempt plus one per entry. */
  schedule: readonly number[];
  random: () => number;
  now: number;
  /** When the terminal transition happened and how long deliveries may keep trying. */
  createdAt: number;
  maxAgeMs: number;
  retryAfterMs: number | null;
}

/**
 * When to try again after a retryable failure: the next schedule entry with jitter, later if
 * the receiver's Retry-After asks for more, and never past `created_at + max_age`.
 */
export function planRetry({
  counted,
  schedule,
  random,
  now,
  createdAt,
  maxAgeMs,
  retryAfterMs,
}: PlanInput): { at: number } | { giveUp: 'retries_exhausted' | 'max_age' } {
  const base = schedule[counted - 1];
  if (base === undefined) return { giveUp: 'retries_exhausted' };
  const delay = Math.max(jitter(base, random), retryAfterMs ?? 0);
  const at = now + delay;
  if (at > createdAt + maxAgeMs) return { giveUp: 'max_age' };
  return { at };
}

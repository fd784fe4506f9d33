import type { FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.js';
import type { RateLimiter } from '../auth/rate-limiter.js';
import { AppError } from '../errors.js';
import './route-config.js';

/** The 429 of a submit token past `requests.max_per_minute`. */
export function rateLimitedError(p: Extract<Principal, { kind: 'submit' }>, perMinute: number): AppError {
  return new AppError(
    'rate_limited',
    `rate limited: token "${p.name}" sent more than ${perMinute} requests and blob uploads in the last minute (requests.max_per_minute)`,
  );
}

/**
 * Counts every create attempt and blob upload of a submit token (before the body is even
 * validated, or for uploads read) and refuses past the per-minute limit with 429
 * `rate_limited`; nothing is stored then.
 */
export function rateLimitCreates(limiter: RateLimiter, perMinute: number) {
  return async (request: FastifyRequest) => {
    const p = request.principal;
    if (p.kind !== 'submit') return;
    if (!limiter.take(p.tokenId)) throw rateLimitedError(p, perMinute);
  };
}

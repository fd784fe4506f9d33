import type { FastifyRequest } from 'fastify';
import type { RateLimiter } from '../auth/rate-limiter.js';
import { AppError } from '../errors.js';
import './route-config.js';

/**
 * Counts every create attempt of a submit token (before the body is even validated) and
 * refuses past the per-minute limit with 429 `rate_limited`; nothing is stored then.
 */
export function rateLimitCreates(limiter: RateLimiter, perMinute: number) {
  return async (request: FastifyRequest) => {
    const p = request.principal;
    if (p.kind !== 'submit') return;
    if (!limiter.take(p.tokenId)) {
      throw new AppError(
        'rate_limited',
        `rate limited: token "${p.name}" created more than ${perMinute} requests in the last minute (requests.max_per_minute)`,
      );
    }
  };
}

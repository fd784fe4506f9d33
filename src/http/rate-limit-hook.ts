import type { FastifyRequest } from 'fastify';
import type { RateLimit } from '../auth/rate-limit.js';
import './route-config.js';

/**
 * Counts every create attempt and blob upload of a submit token (before the body is even
 * validated, or for uploads read) and refuses past the per-minute limit with 429
 * `rate_limited`; nothing is stored then.
 */
export function rateLimitCreates(limit: RateLimit) {
  return async (request: FastifyRequest) => {
    const p = request.principal;
    if (p.kind === 'submit') await limit(p.tokenId, p.name);
  };
}

import type { FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.js';
import type { RateLimit } from '../auth/rate-limit.js';
import './route-config.js';

/**
 * Counts every blob upload of a submit token before a byte of it is read, and refuses past the
 * per-minute limit with 429 `rate_limited`; nothing is stored then.
 */
export function rateLimitUploads(limit: RateLimit) {
  return async (request: FastifyRequest) => {
    const p = request.principal;
    if (p.kind === 'submit') await limit(p.tokenId, p.name);
  };
}

/**
 * A create's `admit` (request-intake.ts): counted once the body is valid, before the dedupe
 * lookup, as the order at creation has it, so an invalid body costs nothing and a dedupe hit counts.
 */
export function admitCreate(limit: RateLimit, p: Principal): () => Promise<void> {
  return async () => {
    if (p.kind === 'submit') await limit(p.tokenId, p.name);
  };
}

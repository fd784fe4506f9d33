import type { FastifyRequest } from 'fastify';
import { admitter, type RateLimit } from '../auth/rate-limit.js';
import './route-config.js';

/**
 * Counts every blob upload of a submit token before a byte of it is read, and refuses past the
 * per-minute limit with 429 `rate_limited`; nothing is stored then. (Creates are counted by
 * request-intake.ts, once the body is valid: `admitter`.)
 */
export function rateLimitUploads(limit: RateLimit) {
  return (request: FastifyRequest) => admitter(limit, request.principal)();
}

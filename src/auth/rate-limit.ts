import type { Clock } from '../lib/clock.js';
import type { Principal } from './principal.js';
import { AppError } from '../lib/errors.js';
import type { RateCounters } from '../storage/rate-counters.js';

const MINUTE_MS = 60_000;

/**
 * A submit token's create budget: `perMinute` creates and blob uploads in any rolling minute (0 = no limit),
 * counted across every daemon on the store. Takes one, or throws 429 `rate_limited`.
 */
export function createRateLimit({ rates, clock, perMinute }: { rates: RateCounters; clock: Clock; perMinute: number }) {
  return async (tokenId: string, name: string): Promise<void> => {
    if (!(await rates.take(`token:${tokenId}`, perMinute, MINUTE_MS, clock.now()))) {
      throw new AppError(
        'rate_limited',
        `rate limited: token "${name}" sent more than ${perMinute} requests and blob uploads in the last minute (requests.max_per_minute)`,
      );
    }
  };
}

export type RateLimit = ReturnType<typeof createRateLimit>;

/**
 * Takes one of `principal`'s budget: what a create's `admit` (request-intake.ts) and an upload
 * run. The admin token is not rate limited.
 */
export function admitter(limit: RateLimit, principal: Principal): () => Promise<void> {
  return async () => {
    if (principal.kind === 'submit') await limit(principal.tokenId, principal.name);
  };
}

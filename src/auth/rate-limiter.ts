import type { Clock } from '../clock.js';

/**
 * A rolling one-minute window per key (submit token). `take` records an attempt and says
 * whether it is within the limit; a limit of 0 turns the check off.
 */
export function createRateLimiter({ perMinute, clock }: { perMinute: number; clock: Clock }) {
  const windows = new Map<string, number[]>();
  return {
    take(key: string): boolean {
      if (perMinute <= 0) return true;
      const now = clock.now();
      const since = now - 60_000;
      let stamps = windows.get(key);
      if (!stamps) windows.set(key, (stamps = []));
      while (stamps.length && stamps[0]! <= since) stamps.shift();
      if (stamps.length >= perMinute) return false;
      stamps.push(now);
      return true;
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

import type { RateCounters } from '../rate-counters.js';

/**
 * Rate counters in this process's memory: exact rolling windows. Right for a store only one
 * daemon uses (SQLite), where nobody else counts.
 */
export function createMemoryRateCounters(): RateCounters {
  const windows = new Map<string, number[]>();
  return {
    async take(key, limit, windowMs, now) {
      if (limit <= 0) return true;
      const since = now - windowMs;
      let stamps = windows.get(key);
      if (!stamps) windows.set(key, (stamps = []));
      while (stamps.length && stamps[0]! <= since) stamps.shift();
      if (stamps.length >= limit) return false;
      stamps.push(now);
      return true;
    },
  };
}

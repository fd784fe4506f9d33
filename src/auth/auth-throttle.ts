import ipaddr from 'ipaddr.js';
import type { Clock } from '../lib/clock.js';

/** Failed authentications one client address may make in a rolling window before it is refused. */
export const AUTH_FAILURES_PER_MINUTE = 10;
const WINDOW_MS = 60_000;
/** Addresses tracked before stale ones are pruned (each entry lives one window at most). */
const PRUNE_AT = 1000;

/**
 * Throttles guessing: after `maxFailures` wrong secrets from one client address
 * within a minute, every attempt that presents a secret from there is refused (429), the right
 * secret included, or a lucky guess would tell. Refused attempts do not count, so a minute after
 * the failures the address may try again. IPv6 clients are keyed by their /64, which one client
 * usually holds whole.
 */
export function createAuthThrottle({ clock, maxFailures = AUTH_FAILURES_PER_MINUTE }: { clock: Clock; maxFailures?: number }) {
  const failures = new Map<string, number[]>();

  function recent(key: string, now: number): number[] {
    const stamps = failures.get(key);
    if (!stamps) return [];
    while (stamps.length && stamps[0]! <= now - WINDOW_MS) stamps.shift();
    if (stamps.length === 0) failures.delete(key);
    return stamps;
  }

  function prune(now: number) {
    for (const key of [...failures.keys()]) recent(key, now);
  }

  return {
    /** Seconds until `address` may try again, or 0 when it may try now. */
    retryAfter(address: string): number {
      // Nobody has failed lately: no address to canonicalise (that costs more than the rest).
      if (failures.size === 0) return 0;
      const now = clock.now();
      const stamps = recent(clientKey(address), now);
      if (stamps.length < maxFailures) return 0;
      return Math.max(1, Math.ceil((stamps[stamps.length - maxFailures]! + WINDOW_MS - now) / 1000));
    },
    /** Records a wrong secret presented from `address`. */
    fail(address: string): void {
      const now = clock.now();
      if (failures.size >= PRUNE_AT) prune(now);
      const key = clientKey(address);
      const stamps = recent(key, now);
      stamps.push(now);
      failures.set(key, stamps);
    },
  };
}

export type AuthThrottle = ReturnType<typeof createAuthThrottle>;

/** IPv4 (IPv4-mapped IPv6 included) as is; other IPv6 addresses by their /64. */
export function clientKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const ip = ipaddr.process(address);
  if (ip.kind() === 'ipv4') return ip.toString();
  return `${(ip as ipaddr.IPv6).parts
    .slice(0, 4)
    .map((p) => p.toString(16))
    .join(':')}::/64`;
}

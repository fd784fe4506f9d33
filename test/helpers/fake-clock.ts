import type { Clock, TimerHandle } from '../../src/lib/clock.js';

export interface FakeClock extends Clock {
  /** Moves time forward, firing due timers in deadline order. */
  advance(ms: number): void;
  set(now: number): void;
  pending(): number;
  /** When the earliest timer is due, or null when none is set. */
  nextAt(): number | null;
}

/** A clock that moves only when told to. */
export function createFakeClock(start = Date.UTC(2026, 0, 1)): FakeClock {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const clock: FakeClock = {
    now: () => now,
    setTimer(fn, ms) {
      const id = ++seq;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      // A timer already due fires on its own, as a real one would: code that reads the time
      // after the test moved it on (a worker between two round trips) must not wait for the next move.
      if (ms <= 0) setImmediate(() => timers.delete(id) && fn());
      return id as unknown as TimerHandle;
    },
    clearTimer(h) {
      timers.delete(h as unknown as number);
    },
    advance(ms) {
      const target = now + ms;
      for (;;) {
        let next: [number, { at: number; fn: () => void }] | undefined;
        for (const entry of timers) if (entry[1].at <= target && (!next || entry[1].at < next[1].at)) next = entry;
        if (!next) break;
        timers.delete(next[0]);
        now = Math.max(now, next[1].at);
        next[1].fn();
      }
      now = target;
    },
    set(t) {
      clock.advance(Math.max(0, t - now));
    },
    pending: () => timers.size,
    nextAt: () => (timers.size ? Math.min(...[...timers.values()].map((t) => t.at)) : null),
  };
  return clock;
}

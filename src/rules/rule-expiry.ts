import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../lib/clock.js';
import type { PolicyEvents } from './policy-events.js';
import type { RuleService } from './rule-service.js';

export interface RuleExpiryDeps {
  rules: Pick<RuleService, 'expire' | 'nextExpiry'>;
  events: PolicyEvents;
  clock: Clock;
  log: Logger;
}

// setTimeout fires at once past 2^31-1 ms; a longer wait is taken in steps.
const MAX_TIMER_MS = 2 ** 31 - 1;
// A store that failed (PostgreSQL restarting) is given a moment before the next try.
const RETRY_MS = 5_000;

/**
 * Deletes stored rules when they expire, as a change of their own (audited, announced), rather
 * than leaving them to stop matching silently. One timer, to the next expiry the store holds;
 * re-armed after each pass and on every `rules.changed`, this daemon's or another's, since a
 * rule added or removed anywhere may move the next expiry. `start()` runs a pass first, so rules
 * that expired while no daemon ran are deleted at start-up. Several daemons may fire at once:
 * only the one whose transaction deletes a rule audits and announces it.
 */
export function createRuleExpiry({ rules, events, clock, log }: RuleExpiryDeps) {
  let timer: TimerHandle | null = null;
  let armedFor: number | null = null;
  let stopped = true;
  let unsubscribe: (() => void) | null = null;
  let running: Promise<void> | null = null;
  let again = false;

  function setTimer(at: number | null, delay?: number) {
    if (timer) clock.clearTimer(timer);
    timer = null;
    armedFor = at;
    if (at === null || stopped) return;
    timer = clock.setTimer(
      () => {
        timer = null;
        void run();
      },
      delay ?? Math.min(Math.max(0, at - clock.now()), MAX_TIMER_MS),
    );
  }

  /** Deletes what has expired, then arms for the next expiry; one pass at a time. */
  function run(): Promise<void> {
    if (running) {
      // A change during a pass may have moved the next expiry: go round once more.
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          let next = await rules.nextExpiry();
          if (next !== null && next <= clock.now()) {
            const expired = await rules.expire();
            if (expired.length) log.debug({ rules: expired }, 'stored rules expired');
            next = await rules.nextExpiry();
          }
          setTimer(next);
        } while (again && !stopped);
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'cannot expire stored rules; trying again shortly');
        setTimer(clock.now() + RETRY_MS, RETRY_MS);
      } finally {
        running = null;
      }
    })();
    return running;
  }

  return {
    /** Follows rule changes and deletes what has already expired; resolves after that first pass. */
    start(): Promise<void> {
      stopped = false;
      unsubscribe = events.on((e) => {
        if (e.type === 'rules.changed') void run();
      });
      return run();
    },
    stop() {
      stopped = true;
      unsubscribe?.();
      unsubscribe = null;
      setTimer(null);
    },
    /** The expiry the timer is armed for (for tests and diagnostics). */
    armedFor: () => armedFor,
    /** Resolves when no pass is running (for tests, and before the store closes). */
    idle: () => running ?? Promise.resolve(),
  };
}

export type RuleExpiry = ReturnType<typeof createRuleExpiry>;

import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../lib/clock.js';
import type { RequestEvents } from './request-events.js';
import type { RequestService } from './request-service.js';

// setTimeout stores its delay in an int32; longer deadlines are reached in hops.
const MAX_TIMER_MS = 2_147_483_647;

/**
 * One timer to the next deadline, never polling (docs/api.md). It re-arms after each sweep
 * and whenever a new request's deadline is earlier than the one it waits for, including
 * requests created on other daemons (their events arrive through the store). `start()` sweeps
 * first, so requests that came due while the daemon was down expire at start-up. Several
 * daemons may sweep at once: the service claims due rows, so each expires once.
 */
export function createExpiryScheduler({ service, events, clock, log }: { service: RequestService; events: RequestEvents; clock: Clock; log: Logger }) {
  let timer: TimerHandle | null = null;
  let armedFor: number | null = null;
  let stopped = true;
  let unsubscribe: (() => void) | null = null;
  let sweeping: Promise<void> | null = null;
  let rearm = false;

  function setTimer(at: number | null) {
    if (timer) clock.clearTimer(timer);
    timer = null;
    armedFor = at;
    if (at === null || stopped) return;
    const delay = Math.min(Math.max(0, at - clock.now()), MAX_TIMER_MS);
    timer = clock.setTimer(() => void fire(), delay);
  }

  async function arm() {
    const next = await service.nextDeadline();
    if (!stopped) setTimer(next);
  }

  /** Sweeps, then arms for the next deadline; one sweep at a time. */
  function fire(): Promise<void> {
    if (sweeping) {
      rearm = true;
      return sweeping;
    }
    timer = null;
    armedFor = null;
    sweeping = (async () => {
      try {
        // A request created meanwhile may be due earlier than what arm() read: go round again.
        do {
          rearm = false;
          const expired = await service.expireDue();
          if (expired.length) log.debug({ count: expired.length }, 'requests expired');
          await arm();
        } while (rearm && !stopped);
      } catch (err) {
        log.error({ err }, 'expiry sweep failed; retrying in 1s');
        if (!stopped) timer = clock.setTimer(() => void fire(), 1000);
      } finally {
        sweeping = null;
      }
    })();
    return sweeping;
  }

  return {
    /** Subscribes to new requests and sweeps what is already due; resolves after that first sweep. */
    start(): Promise<void> {
      stopped = false;
      unsubscribe = events.on((e) => {
        if (e.type !== 'request.created' || e.request.status !== 'pending') return;
        const at = e.request.expires_at;
        if (at === null || (armedFor !== null && at >= armedFor)) return;
        if (sweeping) rearm = true;
        else setTimer(at);
      });
      return fire();
    },
    stop() {
      stopped = true;
      unsubscribe?.();
      if (timer) clock.clearTimer(timer);
      timer = null;
    },
    /** The deadline the timer is armed for (for tests and diagnostics). */
    armedFor: () => armedFor,
    /** Resolves when no sweep is running (for tests). */
    idle: () => sweeping ?? Promise.resolve(),
  };
}

export type ExpiryScheduler = ReturnType<typeof createExpiryScheduler>;

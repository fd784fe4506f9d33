import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../clock.js';
import type { RequestEvents } from './request-events.js';
import type { RequestService } from './request-service.js';

// setTimeout stores its delay in an int32; longer deadlines are reached in hops.
const MAX_TIMER_MS = 2_147_483_647;

/**
 * One timer to the next deadline, never polling (product.md §3). It re-arms after each sweep
 * and whenever a new request's deadline is earlier than the one it waits for. `start()`
 * sweeps first, so requests that came due while the daemon was down expire at start-up.
 */
export function createExpiryScheduler({ service, events, clock, log }: { service: RequestService; events: RequestEvents; clock: Clock; log: Logger }) {
  let timer: TimerHandle | null = null;
  let armedFor: number | null = null;
  let stopped = true;
  let unsubscribe: (() => void) | null = null;

  function arm() {
    if (stopped) return;
    const next = service.nextDeadline();
    if (timer) clock.clearTimer(timer);
    timer = null;
    armedFor = next;
    if (next === null) return;
    const delay = Math.min(Math.max(0, next - clock.now()), MAX_TIMER_MS);
    timer = clock.setTimer(fire, delay);
  }

  function fire() {
    timer = null;
    armedFor = null;
    try {
      const expired = service.expireDue();
      if (expired.length) log.debug({ count: expired.length }, 'requests expired');
    } catch (err) {
      log.error({ err }, 'expiry sweep failed; retrying in 1s');
      if (!stopped) timer = clock.setTimer(fire, 1000);
      return;
    }
    arm();
  }

  return {
    start() {
      stopped = false;
      unsubscribe = events.on((e) => {
        if (e.type !== 'request.created' || e.request.status !== 'pending') return;
        const at = e.request.expires_at;
        if (at !== null && (armedFor === null || at < armedFor)) arm();
      });
      fire();
    },
    stop() {
      stopped = true;
      unsubscribe?.();
      if (timer) clock.clearTimer(timer);
      timer = null;
    },
    /** The deadline the timer is armed for (for tests and diagnostics). */
    armedFor: () => armedFor,
  };
}

export type ExpiryScheduler = ReturnType<typeof createExpiryScheduler>;

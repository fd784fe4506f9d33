import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../lib/clock.js';
import type { Store } from '../storage/store.js';
import type { Notifier } from './notifier.js';
import type { NotifyEvents } from './notify-events.js';

// setTimeout stores its delay in an int32; longer waits are reached in hops.
const MAX_TIMER_MS = 2_147_483_647;

/**
 * One timer to the next due notice: a reminder, an expiring notice or a burst summary (never
 * polling, like the expiry scheduler). The due times live in the store, so they survive
 * restarts (`start()` sends what came due while the daemon was down) and every daemon sees
 * them; the notifier claims due rows, so each goes out once whichever daemon fires first. It
 * re-arms when a notice is scheduled here or, through the store, on another daemon.
 */
export function createNoticeScheduler({
  store,
  notifier,
  events,
  clock,
  log,
}: {
  store: Store;
  notifier: Notifier;
  events: NotifyEvents;
  clock: Clock;
  log: Logger;
}) {
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
    timer = clock.setTimer(() => void fire(), Math.min(Math.max(0, at - clock.now()), MAX_TIMER_MS));
  }

  async function nextDue(): Promise<number | null> {
    const [notice, summary] = await Promise.all([store.notices.nextDue(), store.bursts.nextSummaryAt()]);
    const times = [notice, summary].filter((t): t is number => t !== null);
    return times.length ? Math.min(...times) : null;
  }

  function fire(): Promise<void> {
    if (sweeping) {
      rearm = true;
      return sweeping;
    }
    timer = null;
    armedFor = null;
    sweeping = (async () => {
      try {
        do {
          rearm = false;
          const sent = await store.write((tx) => notifier.sendDue(tx, clock.now()));
          if (sent) log.debug({ count: sent }, 'notices sent');
          const next = await nextDue();
          if (!stopped) setTimer(next);
        } while (rearm && !stopped);
      } catch (err) {
        log.error({ err }, 'notice sweep failed; retrying in 1s');
        if (!stopped) timer = clock.setTimer(() => void fire(), 1000);
      } finally {
        sweeping = null;
      }
    })();
    return sweeping;
  }

  /** A notice was scheduled for `at` (null: somewhere else, read the store). */
  function poke(at: number | null) {
    if (stopped) return;
    if (sweeping) {
      rearm = true;
      return;
    }
    if (at !== null) {
      if (armedFor === null || at < armedFor) setTimer(at);
      return;
    }
    nextDue()
      .then((next) => {
        if (!stopped && !sweeping && next !== null && (armedFor === null || next < armedFor)) setTimer(next);
      })
      .catch((err: unknown) => log.warn({ err }, 'reading the next notice failed'));
  }

  return {
    /** Schedules reminders for requests pending since before they were turned on, sends what is already due, then sleeps until the next notice. */
    async start(): Promise<void> {
      stopped = false;
      unsubscribe = events.on((e) => {
        if (e.type === 'notices.scheduled') poke(e.at);
      });
      try {
        const adopted = await store.write((tx) => notifier.remindPending(tx, clock.now()));
        if (adopted) log.info({ requests: adopted }, 'scheduled reminders for requests already pending');
      } catch (err) {
        // Only reminders of older requests are at stake: the daemon starts, and tries again at its next start.
        log.warn({ err: (err as Error).message }, 'cannot schedule reminders for requests already pending');
      }
      return fire();
    },
    stop() {
      stopped = true;
      unsubscribe?.();
      if (timer) clock.clearTimer(timer);
      timer = null;
    },
    armedFor: () => armedFor,
    /** Resolves when no sweep is running (for tests). */
    idle: () => sweeping ?? Promise.resolve(),
  };
}

export type NoticeScheduler = ReturnType<typeof createNoticeScheduler>;

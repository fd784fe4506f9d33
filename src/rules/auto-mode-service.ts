import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../lib/clock.js';
import { effectiveMode, type AutoModeName, type AutoState } from '../policy/auto-mode.js';
import type { Store, WriteTx } from '../storage/store.js';
import type { AutoView, PolicyEvents } from './policy-events.js';

export interface AutoModeServiceDeps {
  store: Store;
  clock: Clock;
  events: PolicyEvents;
  log: Logger;
}

/** The audit actor when a daemon's start turns auto mode off. */
export const START_ACTOR = 'countersign';
/** The audit actor when auto mode's `for` runs out. */
export const TIMEOUT_ACTOR = 'timeout';

// setTimeout fires at once past 2^31-1 ms; a longer wait is taken in steps.
const MAX_TIMER_MS = 2 ** 31 - 1;

// A mode whose time ran out reads as switched off by `timeout` when it ran out, whether or not
// a daemon's timer has written that yet.
const toView = (s: AutoState, now: number): AutoView =>
  s.mode !== 'off' && effectiveMode(s, now) === 'off' ? { mode: 'off', until: null, set_at: s.until, set_by: TIMEOUT_ACTOR } : { ...s };

/**
 * Auto mode: one state in the store, so every daemon on it applies the same mode
 * to the requests it creates. Runtime only: a daemon's start turns it off (for every daemon on
 * the store). A mode set `for` a while turns itself off when that runs out: each daemon keeps a
 * timer, the first to fire switches it off (a conditional update) and tells the others.
 */
export function createAutoModeService({ store, clock, events, log }: AutoModeServiceDeps) {
  let timer: TimerHandle | null = null;
  let stopped = false;

  function schedule(until: number | null) {
    if (timer) clock.clearTimer(timer);
    timer = null;
    if (until === null || stopped) return;
    timer = clock.setTimer(
      () => {
        timer = null;
        if (clock.now() < until) schedule(until);
        else
          void expire(until).catch((err: unknown) => log.warn({ err: (err as Error).message }, 'cannot turn auto mode off; trying again at the next change'));
      },
      Math.min(Math.max(0, until - clock.now()), MAX_TIMER_MS),
    );
  }

  function changed(tx: WriteTx, view: AutoView) {
    tx.announce({ type: 'auto.changed' });
    tx.afterCommit(() => {
      events.emit({ type: 'auto.changed', auto: view });
      schedule(view.until);
    });
  }

  async function expire(until: number) {
    const at = clock.now();
    await store.write(async (tx) => {
      if (!(await tx.policy.expireAuto(until, TIMEOUT_ACTOR))) return;
      const { auto } = await tx.policy.state();
      await tx.policy.appendAudit('auto.changed', TIMEOUT_ACTOR, at, null, { mode: 'off', reason: 'its time ran out' });
      changed(tx, toView(auto, at));
    });
  }

  async function set(mode: AutoModeName, forMs: number | null, actor: string, reason?: string): Promise<AutoView> {
    // One reading of the clock: `until` is exactly `for` after `set_at`.
    const at = clock.now();
    const state: AutoState = { mode, until: mode === 'off' || forMs === null ? null : at + forMs, set_at: at, set_by: actor };
    const view = toView(state, at);
    await store.write(async (tx) => {
      const previous = (await tx.policy.state()).auto;
      await tx.policy.setAuto(state);
      await tx.policy.appendAudit('auto.changed', actor, at, null, {
        mode,
        until: state.until,
        previous: effectiveMode(previous, at),
        ...(reason ? { reason } : {}),
      });
      changed(tx, view);
    });
    return view;
  }

  // Another daemon switched it: follow its timer too (whoever fires first turns it off).
  const unsubscribe = events.on((e) => {
    if (e.type === 'auto.changed' && e.remote) schedule(e.auto.until);
  });

  return {
    async get(): Promise<AutoView> {
      return toView((await store.policy.state()).auto, clock.now());
    },

    /** `PUT /v1/auto`: `for` (ms) only with low or all. */
    set(mode: AutoModeName, forMs: number | null, actor: string): Promise<AutoView> {
      return set(mode, forMs, actor);
    },

    /** At start: auto mode is runtime only, so a (re)starting daemon turns it off. */
    async start(): Promise<void> {
      const { auto } = await store.policy.state();
      if (auto.mode !== 'off') await set('off', null, START_ACTOR, 'a daemon started');
    },

    stop() {
      stopped = true;
      unsubscribe();
      if (timer) clock.clearTimer(timer);
      timer = null;
    },
  };
}

export type AutoModeService = ReturnType<typeof createAutoModeService>;

/** Time is a dependency: services read it from here so tests can move it by hand. */
export interface Clock {
  now(): number;
  setTimer(fn: () => void, ms: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

export type TimerHandle = { readonly __timer: unique symbol } | ReturnType<typeof setTimeout>;

const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (fn, ms) => {
    // Past 2^31 - 1 ms Node fires a timer at once: wake at that limit instead (callers re-check).
    const t = setTimeout(fn, Math.min(ms, MAX_TIMER_MS));
    t.unref?.();
    return t;
  },
  clearTimer: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

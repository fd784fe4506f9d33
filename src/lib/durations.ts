/**
 * Durations as the configuration writes them: a positive number with a unit (`500ms`, `30s`, `10m`,
 * `2h`, `1d`, `1w`), at most one year. A bare number is an error: `30` could mean seconds or
 * milliseconds, and guessing wrong expires a request at the wrong time.
 */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
export const ONE_YEAR_MS = 365 * UNIT_MS.d;

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/;

export type DurationResult = { ok: true; ms: number } | { ok: false; message: string };

export function parseDuration(text: string, { max = ONE_YEAR_MS }: { max?: number } = {}): DurationResult {
  // Not trimmed: the text is stored and served as given, so what it says must be the duration itself.
  const m = DURATION.exec(text);
  if (!m) {
    return { ok: false, message: `"${text}" is not a duration: use a number with a unit (ms, s, m, h, d, w), e.g. 30s or 10m` };
  }
  const ms = Math.round(Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]);
  if (!(ms > 0)) return { ok: false, message: `duration "${text}" must be positive` };
  if (ms > max) return { ok: false, message: `duration "${text}" is longer than ${formatDuration(max)}` };
  return { ok: true, ms };
}

/** Like parseDuration, for values already validated (config): throws on bad input. */
export function durationMs(text: string): number {
  const r = parseDuration(text);
  if (!r.ok) throw new Error(r.message);
  return r.ms;
}

export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['w', UNIT_MS.w],
    ['d', UNIT_MS.d],
    ['h', UNIT_MS.h],
    ['m', UNIT_MS.m],
    ['s', UNIT_MS.s],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

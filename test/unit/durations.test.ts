import { describe, expect, it } from 'vitest';
import { durationMs, formatDuration, ONE_YEAR_MS, parseDuration } from '../../src/lib/durations.js';

describe('durations', () => {
  it.each([
    ['500ms', 500],
    ['1ms', 1],
    ['30s', 30_000],
    ['10m', 600_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['1w', 604_800_000],
    ['1.5h', 5_400_000],
    ['365d', ONE_YEAR_MS],
    ['52w', 52 * 604_800_000],
    ['8760h', ONE_YEAR_MS],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toEqual({ ok: true, ms });
    expect(durationMs(text)).toBe(ms);
  });

  it.each([
    ['30', 'not a duration'],
    ['', 'not a duration'],
    ['1 h', 'not a duration'],
    ['-1s', 'not a duration'],
    ['+1s', 'not a duration'],
    ['2y', 'not a duration'],
    ['30S', 'not a duration'],
    ['1h30m', 'not a duration'],
    ['.5s', 'not a duration'],
    ['1e3s', 'not a duration'],
    ['none', 'not a duration'],
    // Stored and served as given: whitespace around it would make the served text no duration.
    [' 5s', 'not a duration'],
    ['\t5s ', 'not a duration'],
    ['5s\n', 'not a duration'],
    ['\u00a05s', 'not a duration'],
    ['0s', 'positive'],
    ['0.0001ms', 'positive'],
    ['366d', 'longer than'],
    ['53w', 'longer than'],
    ['400000d', 'longer than'],
    ['8761h', 'longer than'],
  ])('%j is refused (%s)', (text, why) => {
    const r = parseDuration(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain(why);
    expect(() => durationMs(text)).toThrow();
  });

  it('takes a custom maximum', () => {
    expect(parseDuration('2h', { max: 3_600_000 }).ok).toBe(false);
    expect(parseDuration('1h', { max: 3_600_000 })).toEqual({ ok: true, ms: 3_600_000 });
  });

  it('formats milliseconds in the largest whole unit', () => {
    expect(formatDuration(ONE_YEAR_MS)).toBe('365d');
    expect(formatDuration(604_800_000)).toBe('1w');
    expect(formatDuration(90_000)).toBe('90s');
    expect(formatDuration(1500)).toBe('1500ms');
    for (const ms of [1, 999, 60_000, 7_200_000, 86_400_000]) expect(parseDuration(formatDuration(ms))).toEqual({ ok: true, ms });
  });
});

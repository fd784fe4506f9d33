import { describe, expect, it } from 'vitest';
import { classifyStatus, jitter, parseRetryAfter, planRetry } from '../../src/callbacks/retry-policy.js';

describe('classifyStatus', () => {
  const now = Date.UTC(2026, 0, 1);
  it.each([200, 201, 202, 204, 299])('%i is delivered', (s) => {
    expect(classifyStatus(s, undefined, now)).toEqual({ kind: 'delivered', status: s });
  });
  it.each([408, 429, 500, 502, 503, 504, 599])('%i is retried', (s) => {
    expect(classifyStatus(s, undefined, now)).toMatchObject({ kind: 'retry', status: s, errorClass: 'http_status', retryAfterMs: null });
  });
  it.each([
    [301, 'redirect'],
    [302, 'redirect'],
    [307, 'redirect'],
    [308, 'redirect'],
    [400, 'rejected'],
    [401, 'rejected'],
    [403, 'rejected'],
    [404, 'rejected'],
    [410, 'gone'],
    [422, 'rejected'],
    [101, 'rejected'],
  ])('%i fails at once (%s)', (s, reason) => {
    expect(classifyStatus(s, undefined, now)).toMatchObject({ kind: 'fail', status: s, reason });
  });
  it('Retry-After counts on 429 and 503 only', () => {
    expect(classifyStatus(429, '7', now)).toMatchObject({ retryAfterMs: 7_000 });
    expect(classifyStatus(503, '7', now)).toMatchObject({ retryAfterMs: 7_000 });
    expect(classifyStatus(500, '7', now)).toMatchObject({ retryAfterMs: null });
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);
  it('delay-seconds and HTTP dates; garbage is ignored; past dates mean now', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter(new Date(now + 90_000).toUTCString(), now)).toBe(90_000);
    expect(parseRetryAfter(new Date(now - 90_000).toUTCString(), now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter('-5', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});

describe('jitter and planRetry', () => {
  it('jitter stays within ±20 %', () => {
    expect(jitter(10_000, () => 0)).toBe(8_000);
    expect(jitter(10_000, () => 0.5)).toBe(10_000);
    expect(jitter(10_000, () => 0.999_999_9)).toBe(12_000);
  });

  const base = { schedule: [5_000, 30_000, 120_000], random: () => 0.5, now: 1_000_000, createdAt: 1_000_000, maxAgeMs: 86_400_000, retryAfterMs: null };
  it('steps through the schedule, one attempt plus one per entry', () => {
    expect(planRetry({ ...base, counted: 1 })).toEqual({ at: 1_005_000 });
    expect(planRetry({ ...base, counted: 2 })).toEqual({ at: 1_030_000 });
    expect(planRetry({ ...base, counted: 3 })).toEqual({ at: 1_120_000 });
    expect(planRetry({ ...base, counted: 4 })).toEqual({ giveUp: 'retries_exhausted' });
  });
  it('Retry-After can only push the next attempt later', () => {
    expect(planRetry({ ...base, counted: 1, retryAfterMs: 60_000 })).toEqual({ at: 1_060_000 });
    expect(planRetry({ ...base, counted: 1, retryAfterMs: 1_000 })).toEqual({ at: 1_005_000 });
  });
  it('never past created_at + max_age', () => {
    expect(planRetry({ ...base, counted: 1, maxAgeMs: 5_000 })).toEqual({ at: 1_005_000 });
    expect(planRetry({ ...base, counted: 1, maxAgeMs: 4_999 })).toEqual({ giveUp: 'max_age' });
    expect(planRetry({ ...base, counted: 1, retryAfterMs: 86_400_001 })).toEqual({ giveUp: 'max_age' });
  });
});

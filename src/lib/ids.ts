import { monotonicFactory } from 'ulid';

const next = monotonicFactory();

/** A ULID: 26 characters, sortable by creation time (monotonic within one millisecond). */
export function newId(now: number = Date.now()): string {
  return next(now);
}

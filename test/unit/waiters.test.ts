import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/lib/errors.js';
import { RequestEvents } from '../../src/requests/request-events.js';
import type { HandupRequest } from '../../src/requests/request-schema.js';
import { createWaiters } from '../../src/requests/waiters.js';
import { createFakeClock } from '../helpers/fake-clock.js';

/** Long-poll waits: subscribe first, then read; the read also decides who may wait. */

const record = (status: HandupRequest['status']) => ({ id: 'r1', title: 'Deploy', status }) as HandupRequest;

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('waiters', () => {
  it("never hands over the event's record before the read has said the caller may wait on it", async () => {
    const events = new RequestEvents();
    const waiters = createWaiters({ events, clock: createFakeClock() });
    const reads = [deferred<HandupRequest>(), deferred<HandupRequest>()];
    let calls = 0;
    const check = () => reads[calls++]!.promise;

    const waiting = waiters.wait('r1', 25_000, check);
    // The request ends while the caller's first read (its ownership check) is still under way.
    events.emit({ type: 'request.decided', request: record('approved'), format: 'handup' });
    reads[0]!.reject(new AppError('not_found', 'request r1 not found'));
    await expect(waiting).rejects.toMatchObject({ code: 'not_found' });
    expect(calls).toBe(1);
  });

  it('after an early wake-up reads again once allowed, and answers with that read', async () => {
    const events = new RequestEvents();
    const waiters = createWaiters({ events, clock: createFakeClock() });
    const first = deferred<HandupRequest>();
    const reads = [first.promise, Promise.resolve(record('approved'))];
    let calls = 0;
    const waiting = waiters.wait('r1', 25_000, () => reads[calls++]!);
    events.emit({ type: 'request.decided', request: { ...record('approved'), title: 'from the event' }, format: 'handup' });
    // The first read ran before the decision committed: pending.
    first.resolve(record('pending'));
    expect(await waiting).toMatchObject({ status: 'approved', title: 'Deploy' });
    expect(calls).toBe(2);
  });

  it('once allowed, a wake-up answers with the terminal record', async () => {
    const events = new RequestEvents();
    const waiters = createWaiters({ events, clock: createFakeClock() });
    const waiting = waiters.wait('r1', 25_000, async () => record('pending'));
    await Promise.resolve();
    await Promise.resolve();
    events.emit({ type: 'request.decided', request: record('denied'), format: 'handup' });
    expect(await waiting).toMatchObject({ status: 'denied' });
  });

  it('held() lists each request someone waits on once, and forgets it when its wait ends', async () => {
    const events = new RequestEvents();
    const clock = createFakeClock();
    const waiters = createWaiters({ events, clock });
    const pending = async () => record('pending');
    const one = waiters.wait('r1', 25_000, pending);
    const two = waiters.wait('r1', 25_000, pending);
    const any = waiters.waitAny(['r1', 'r2'], 25_000, async () => false);
    await Promise.resolve();
    await Promise.resolve();
    expect(waiters.held().sort()).toEqual(['r1', 'r2']);
    events.emit({ type: 'request.decided', request: record('approved'), format: 'handup' });
    await Promise.all([one, two, any]);
    expect(waiters.held()).toEqual([]);
  });
});

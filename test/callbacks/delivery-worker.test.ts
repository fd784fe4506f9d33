import { afterEach, describe, expect, it } from 'vitest';
import type { WriteOptions } from '../../src/storage/store.js';
import { createFakeClock } from '../helpers/fake-clock.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { SECRET, auditOf, createWithCallback, decideRequest, startReceiver, waitForDeliveries, type Receiver } from './callback-kit.js';

describe('the delivery worker', () => {
  let t: TestServer | undefined;
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await t?.close();
    await receiver?.close();
    t = receiver = undefined;
  });

  // A delivery queued while the worker is between its last lease and reading when the next row
  // is due (a database round trip on PostgreSQL) is still sent at once. The clock is fake, so a
  // lost wake-up would never be made good by a timer.
  it('does not lose a wake-up that arrives while it reads the next due time', async () => {
    receiver = await startReceiver();
    t = await startTestServer({ callbacks: { allowlist: ['127.0.0.1'], secret: SECRET } }, { clock: createFakeClock(Date.now()) });
    const url = `${receiver.url}/cb`;

    // Hold the worker's next read of the due time until the second decision has woken it.
    const deliveries = t.server.deps.store.deliveries;
    const nextDue = deliveries.nextDue.bind(deliveries);
    let entered!: () => void;
    const inRead = new Promise<void>((r) => (entered = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let held = false;
    deliveries.nextDue = async () => {
      const due = await nextDue();
      if (!held) {
        held = true;
        entered();
        await gate;
      }
      return due;
    };

    const first = await createWithCallback(t.api, url);
    await decideRequest(t.api, first, 'approve');
    await inRead;
    const second = await createWithCallback(t.api, url);
    await decideRequest(t.api, second, 'approve');
    // The decision's wake-up runs on the turn after its commit.
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    release();

    const [d] = await waitForDeliveries(t.api, second.id, (d) => d[0]?.state === 'delivered');
    expect(d.attempts.length).toBe(1);
    expect(receiver.received.map((r) => JSON.parse(r.body).data.request.id)).toContain(second.id);
  });

  // The lease is written durably before an attempt, so every attempt made is on record; how the
  // attempt ended is not (store.ts, WriteOptions): losing it is the daemon stopping mid-attempt,
  // which the lease already covers.
  it('leases durably before the POST and records its end without a sync of its own', async () => {
    receiver = await startReceiver();
    t = await startTestServer({ callbacks: { allowlist: ['127.0.0.1'], secret: SECRET } });
    const store = t.server.deps.store;
    const write = store.write.bind(store);
    const writes: Array<{ durable: boolean; received: number }> = [];
    store.write = (work, options?: WriteOptions) => {
      writes.push({ durable: options?.durable ?? true, received: receiver!.received.length });
      return write(work, options);
    };

    const r = await createWithCallback(t.api, `${receiver.url}/cb`);
    await decideRequest(t.api, r, 'approve');
    const [d] = await waitForDeliveries(t.api, r.id, (list) => list[0]?.state === 'delivered');
    expect(d.attempts).toMatchObject([{ n: 1, status: 200 }]);
    expect((await auditOf(t.api, r.id)).map((a) => a.event)).toContain('callback.delivered');

    // Only the write after the POST is not durable: the decision and the lease before it are.
    const lazy = writes.filter((w) => !w.durable);
    expect(lazy).toEqual([{ durable: false, received: 1 }]);
    expect(writes.filter((w) => w.durable && w.received === 0).length).toBeGreaterThanOrEqual(3);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import type { WriteOptions } from '../../src/storage/store.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { SECRET, auditOf, createWithCallback, decideRequest, startReceiver, waitForDeliveries, type Receiver } from './callback-kit.js';

/**
 * The lease is written durably before an attempt, so every attempt made is on record; how the
 * attempt ended is not (store.ts, WriteOptions): losing it is the daemon stopping mid-attempt,
 * which the lease already covers.
 */
describe('the delivery worker’s writes', () => {
  let t: TestServer | undefined;
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await t?.close();
    await receiver?.close();
    t = receiver = undefined;
  });

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

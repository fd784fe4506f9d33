import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  auditOf,
  createWithCallback,
  decideRequest,
  startCallbackServer,
  startReceiver,
  waitForDeliveries,
  type CallbackServer,
  type Receiver,
} from '../callbacks/callback-kit.js';
import { createFakeClock } from '../helpers/fake-clock.js';

/**
 * Graceful shutdown: an attempt in flight gets a short grace to finish; one
 * still running after it is cut, recorded as interrupted and released, so the next start makes
 * it. Queued deliveries simply wait in SQLite.
 */
describe('callbacks across a graceful shutdown', () => {
  let receiver: Receiver | undefined;
  let t: CallbackServer | undefined;
  let dataDir: string | undefined;
  afterEach(async () => {
    await receiver?.close();
    await t?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    receiver = t = dataDir = undefined;
  });

  it('an attempt that answers within the grace completes before the daemon stops', async () => {
    const clock = createFakeClock(Date.now());
    receiver = await startReceiver(() => 'hang');
    const first = await startCallbackServer({}, { clock });
    dataDir = first.dataDir;
    const r = await createWithCallback(first.api, `${receiver.url}/hook`);
    await decideRequest(first.api, r);
    await receiver.waitFor(1);
    const stopping = first.stop();
    receiver.held[0]!.writeHead(200).end();
    await stopping;

    t = await startCallbackServer({}, { clock, dataDir });
    const [d] = await waitForDeliveries(t.api, r.id, (list) => list.length === 1);
    expect(d.state).toBe('delivered');
    expect(d.attempts.map((a: any) => [a.status, a.error_class])).toEqual([[200, null]]);
    expect(receiver.received).toHaveLength(1);
  });

  it('an attempt still hanging after the grace is released and made on the next start', async () => {
    const clock = createFakeClock(Date.now());
    receiver = await startReceiver((n) => (n === 1 ? 'hang' : { status: 200 }));
    const first = await startCallbackServer({}, { clock });
    dataDir = first.dataDir;
    const r = await createWithCallback(first.api, `${receiver.url}/hook`);
    await decideRequest(first.api, r);
    const [held] = await receiver.waitFor(1);
    const stopping = first.stop();
    clock.advance(2_000);
    await stopping;

    t = await startCallbackServer({}, { clock, dataDir });
    const received = await receiver.waitFor(2);
    expect(received[1]!.headers['webhook-id']).toBe(held!.headers['webhook-id']);
    const [d] = await waitForDeliveries(t.api, r.id, (list) => list[0]?.state === 'delivered');
    expect(d.attempts.map((a: any) => [a.n, a.status, a.error_class])).toEqual([
      [1, null, 'interrupted'],
      [2, 200, null],
    ]);
    expect((await auditOf(t.api, r.id)).filter((a) => a.event.startsWith('callback.')).map((a) => a.event)).toEqual(['callback.delivered']);
  });
});

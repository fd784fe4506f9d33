import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import {
  SECRET,
  auditOf,
  createWithCallback,
  decideRequest,
  deliveriesOf,
  startCallbackServer,
  startReceiver,
  startTrap,
  waitForDeliveries,
  type CallbackServer,
  type Receiver,
  type ReceiverAnswer,
} from '../callbacks/callback-kit.js';
import { createFakeClock, type FakeClock } from '../helpers/fake-clock.js';

/**
 * Retries over real HTTP with a fake clock (docs/callbacks.md): nothing is sent before its
 * scheduled time and it is sent at that time. The worker leases a due row synchronously when
 * its timer fires, so the deliveries endpoint shows an early attempt at once.
 */
describe('callback retries', () => {
  let t: CallbackServer | undefined;
  let receiver: Receiver | undefined;
  const cleanups: Array<() => Promise<void>> = [];
  let clock: FakeClock;
  afterEach(async () => {
    await receiver?.close();
    await t?.close();
    for (const c of cleanups.splice(0)) await c();
    t = receiver = undefined;
  });

  async function setup(answer: (n: number) => ReceiverAnswer, overrides: Parameters<typeof startCallbackServer>[0] = {}, random?: () => number) {
    // Whole seconds, near real time: HTTP dates have second precision and the signature
    // verifier allows 5 minutes of skew.
    clock = createFakeClock(Math.floor(Date.now() / 1000) * 1000);
    receiver = await startReceiver(answer);
    t = await startCallbackServer(overrides, { clock, ...(random ? { callbacks: { random } } : {}) });
    const r = await createWithCallback(t.api, `${receiver.url}/hook`);
    const decided = await decideRequest(t.api, r, 'approve');
    return { r, decidedAt: decided.decision.decided_at as number };
  }

  /** Waits until attempt `n` has an outcome and the row is no longer leased. */
  function attemptDone(id: string, n: number) {
    return waitForDeliveries(t!.api, id, (d) => d[0]?.attempts.length === n && d[0].state !== 'leased');
  }

  it('503, 503, 200: three attempts on schedule, one webhook-id, one callback.delivered', async () => {
    const answers = [503, 503, 200];
    const { r, decidedAt } = await setup((n) => ({ status: answers[n - 1] ?? 500 }));
    await receiver!.waitFor(1);
    let [d] = await attemptDone(r.id, 1);
    expect(d).toMatchObject({ state: 'pending', next_attempt_at: decidedAt + 5_000, last_error: 'HTTP 503' });
    expect(d.attempts[0]).toMatchObject({ n: 1, status: 503, error_class: 'http_status' });

    clock.advance(4_999);
    [d] = await deliveriesOf(t!.api, r.id);
    expect(d.state).toBe('pending');
    expect(d.attempts).toHaveLength(1);
    expect(receiver!.received).toHaveLength(1);
    clock.advance(1);
    await receiver!.waitFor(2);
    [d] = await attemptDone(r.id, 2);
    expect(d).toMatchObject({ state: 'pending', next_attempt_at: decidedAt + 5_000 + 30_000 });

    clock.advance(29_999);
    [d] = await deliveriesOf(t!.api, r.id);
    expect(d.attempts).toHaveLength(2);
    clock.advance(1);
    const received = await receiver!.waitFor(3);
    [d] = await attemptDone(r.id, 3);
    expect(d).toMatchObject({ state: 'delivered', next_attempt_at: null, last_error: null, finished_at: decidedAt + 35_000 });
    expect(d.attempts.map((a: any) => [a.n, a.status, a.error_class, a.started_at])).toEqual([
      [1, 503, 'http_status', decidedAt],
      [2, 503, 'http_status', decidedAt + 5_000],
      [3, 200, null, decidedAt + 35_000],
    ]);

    // Same id and body on every attempt; a fresh, validly signed timestamp each time.
    const ids = new Set(received.map((x) => x.headers['webhook-id']));
    expect(ids).toEqual(new Set([d.id]));
    expect(new Set(received.map((x) => x.body)).size).toBe(1);
    expect(received.map((x) => Number(x.headers['webhook-timestamp']))).toEqual([decidedAt / 1000, decidedAt / 1000 + 5, decidedAt / 1000 + 35]);
    for (const x of received) new Webhook(SECRET).verify(x.body, x.headers as Record<string, string>);

    const audit = await auditOf(t!.api, r.id);
    const cb = audit.filter((a) => a.event.startsWith('callback.'));
    expect(cb).toHaveLength(1);
    expect(cb[0]).toMatchObject({ event: 'callback.delivered', actor: 'callbacks', details: { delivery_id: d.id, attempts: 3, status: 200 } });
  });

  it('429 with Retry-After in seconds waits that long instead of the 5s step', async () => {
    const { r, decidedAt } = await setup((n) => (n === 1 ? { status: 429, headers: { 'retry-after': '120' } } : { status: 204 }));
    const [d] = await attemptDone(r.id, 1);
    expect(d).toMatchObject({ state: 'pending', next_attempt_at: decidedAt + 120_000 });
    clock.advance(119_999);
    expect((await deliveriesOf(t!.api, r.id))[0].attempts).toHaveLength(1);
    clock.advance(1);
    await receiver!.waitFor(2);
    const [done] = await attemptDone(r.id, 2);
    expect(done.state).toBe('delivered');
    expect(done.attempts[1]).toMatchObject({ status: 204, started_at: decidedAt + 120_000 });
  });

  it('429 with Retry-After as an HTTP date', async () => {
    const at = () => new Date(clock.now() + 60_000).toUTCString();
    const { r, decidedAt } = await setup((n) => (n === 1 ? { status: 429, headers: { 'retry-after': at() } } : { status: 200 }));
    const [d] = await attemptDone(r.id, 1);
    expect(d.next_attempt_at).toBe(decidedAt + 60_000);
  });

  it('jitter: each step moves by up to ±20 % (random source injected)', async () => {
    const low = await setup(
      () => ({ status: 500 }),
      {},
      () => 0,
    );
    expect((await attemptDone(low.r.id, 1))[0].next_attempt_at).toBe(low.decidedAt + 4_000);
    await receiver!.close();
    await t!.close();
    const high = await setup(
      () => ({ status: 500 }),
      {},
      () => 0.999_999,
    );
    expect((await attemptDone(high.r.id, 1))[0].next_attempt_at).toBe(high.decidedAt + 6_000);
  });

  it('410 stops at once', async () => {
    const { r } = await setup(() => ({ status: 410 }));
    const [d] = await attemptDone(r.id, 1);
    expect(d).toMatchObject({ state: 'failed', next_attempt_at: null, last_error: 'HTTP 410' });
    clock.advance(24 * 3_600_000);
    expect((await deliveriesOf(t!.api, r.id))[0].attempts).toHaveLength(1);
    expect(receiver!.received).toHaveLength(1);
    const failed = (await auditOf(t!.api, r.id)).filter((a) => a.event === 'callback.failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ actor: 'callbacks', details: { reason: 'gone', status: 410, attempts: 1 } });
  });

  it('400 fails at once; other 4xx are not retried', async () => {
    const { r } = await setup(() => ({ status: 400 }));
    const [d] = await attemptDone(r.id, 1);
    expect(d.state).toBe('failed');
    clock.advance(3_600_000);
    expect(receiver!.received).toHaveLength(1);
    const audit = await auditOf(t!.api, r.id);
    expect(audit.filter((a) => a.event.startsWith('callback.')).map((a) => [a.event, a.details.reason])).toEqual([['callback.failed', 'rejected']]);
  });

  it('408 is retried like a 5xx', async () => {
    const { r, decidedAt } = await setup((n) => ({ status: n === 1 ? 408 : 200 }));
    const [d] = await attemptDone(r.id, 1);
    expect(d).toMatchObject({ state: 'pending', next_attempt_at: decidedAt + 5_000 });
  });

  it('a 302 is a failure and its Location is never followed', async () => {
    const trap = await startTrap();
    cleanups.push(trap.close);
    const { r } = await setup(() => ({ status: 302, headers: { location: `http://127.0.0.1:${trap.port}/stolen` } }));
    const [d] = await attemptDone(r.id, 1);
    expect(d).toMatchObject({ state: 'failed', last_error: 'HTTP 302' });
    expect(d.attempts[0]).toMatchObject({ status: 302, error_class: 'http_status' });
    clock.advance(3_600_000);
    expect(trap.connections()).toBe(0);
    expect(receiver!.received).toHaveLength(1);
    const failed = (await auditOf(t!.api, r.id)).filter((a) => a.event === 'callback.failed');
    expect(failed.map((a) => a.details.reason)).toEqual(['redirect']);
  });

  it('max_age: gives up once the next attempt would fall past it, with callback.failed', async () => {
    // Attempts at 0s, 5s and 35s; the next (35s + 2m) would be past 1m.
    const { r, decidedAt } = await setup(() => ({ status: 503 }), { callbacks: { max_age: '1m' } });
    await attemptDone(r.id, 1);
    clock.advance(5_000);
    await attemptDone(r.id, 2);
    clock.advance(30_000);
    const [d] = await attemptDone(r.id, 3);
    expect(d).toMatchObject({ state: 'failed', finished_at: decidedAt + 35_000 });
    clock.advance(24 * 3_600_000);
    expect(receiver!.received).toHaveLength(3);
    const cb = (await auditOf(t!.api, r.id)).filter((a) => a.event.startsWith('callback.'));
    expect(cb).toEqual([
      expect.objectContaining({
        event: 'callback.failed',
        actor: 'callbacks',
        details: expect.objectContaining({ reason: 'max_age', attempts: 3, status: 503 }),
      }),
    ]);
  });

  it('one attempt plus one per schedule entry, then retries_exhausted', async () => {
    const { r } = await setup(() => ({ status: 500 }), { callbacks: { retry_schedule: ['1s', '2s'] } });
    await attemptDone(r.id, 1);
    clock.advance(1_000);
    await attemptDone(r.id, 2);
    clock.advance(2_000);
    const [d] = await attemptDone(r.id, 3);
    expect(d.state).toBe('failed');
    expect(d.attempts.map((a: any) => a.status)).toEqual([500, 500, 500]);
    const failed = (await auditOf(t!.api, r.id)).filter((a) => a.event === 'callback.failed');
    expect(failed.map((a) => a.details.reason)).toEqual(['retries_exhausted']);
  });

  it('a receiver that does not answer within callbacks.timeout is a timeout, retried', async () => {
    const { r, decidedAt } = await setup((n) => (n === 1 ? 'hang' : { status: 200 }));
    await receiver!.waitFor(1);
    expect((await deliveriesOf(t!.api, r.id))[0].state).toBe('leased');
    clock.advance(14_999);
    expect((await deliveriesOf(t!.api, r.id))[0].state).toBe('leased');
    clock.advance(1);
    const [d] = await attemptDone(r.id, 1);
    expect(d).toMatchObject({ state: 'pending', next_attempt_at: decidedAt + 15_000 + 5_000 });
    expect(d.attempts[0]).toMatchObject({ status: null, error_class: 'timeout' });
    clock.advance(5_000);
    const [done] = await attemptDone(r.id, 2);
    expect(done.state).toBe('delivered');
  });

  it('a refused connection is a network error, retried', async () => {
    const trap = await startTrap();
    await trap.close(); // nothing listens on this port any more
    clock = createFakeClock(Math.floor(Date.now() / 1000) * 1000);
    t = await startCallbackServer({}, { clock });
    const r = await createWithCallback(t.api, `http://127.0.0.1:${trap.port}/hook`);
    await decideRequest(t.api, r);
    const [d] = await attemptDone(r.id, 1);
    expect(d.state).toBe('pending');
    expect(d.attempts[0]).toMatchObject({ status: null, error_class: 'network' });
    expect(d.attempts[0].error).toContain('ECONNREFUSED');
  });

  it('an expiry swept long after its deadline (the daemon was down past callbacks.max_age) is still delivered, dated at the deadline', async () => {
    clock = createFakeClock(Math.floor(Date.now() / 1000) * 1000);
    receiver = await startReceiver();
    const first = await startCallbackServer({}, { clock });
    const r = await createWithCallback(first.api, `${receiver.url}/hook`, { timeout: '1m' });
    await first.stop();
    clock.advance(25 * 3_600_000);
    t = await startCallbackServer({}, { clock, dataDir: first.dataDir });
    const [d] = await attemptDone(r.id, 1);
    expect(d).toMatchObject({ state: 'delivered', type: 'request.expired' });
    expect(receiver.received).toHaveLength(1);
    const body = JSON.parse(receiver.received[0]!.body);
    expect(body).toMatchObject({ type: 'request.expired', time: new Date(r.expires_at).toISOString() });
    expect(body.data.request).toMatchObject({ status: 'expired', decision: { decided_at: r.expires_at } });
  });

  it('a callback_url no longer allowed at delivery time fails without dialling', async () => {
    clock = createFakeClock(Math.floor(Date.now() / 1000) * 1000);
    receiver = await startReceiver();
    const first = await startCallbackServer({}, { clock });
    const r = await createWithCallback(first.api, `${receiver.url}/hook`);
    await first.stop();
    // Same data, new config: 127.0.0.1 is no longer allowlisted.
    t = await startCallbackServer({ callbacks: { allowlist: ['hooks.example.com'] } }, { clock, dataDir: first.dataDir });
    await decideRequest(t.api, r);
    const [d] = await attemptDone(r.id, 1);
    expect(d).toMatchObject({ state: 'failed' });
    expect(d.attempts[0]).toMatchObject({ status: null, error_class: 'url_not_allowed' });
    expect(receiver.connections()).toBe(0);
    const failed = (await auditOf(t.api, r.id)).filter((a) => a.event === 'callback.failed');
    expect(failed.map((a) => a.details.reason)).toEqual(['url_not_allowed']);
  });
});

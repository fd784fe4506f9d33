import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import {
  SECRET,
  auditOf,
  createWithCallback,
  decideRequest,
  deliveriesOf,
  handupSignature,
  startCallbackServer,
  startReceiver,
  waitForDeliveries,
  type CallbackServer,
  type ReceivedCallback,
  type Receiver,
} from '../callbacks/callback-kit.js';
import { createFakeClock, type FakeClock } from '../helpers/fake-clock.js';
import { expectValidRequest } from '../helpers/upstream-schemas.js';
import { createApiClient } from '../helpers/test-server.js';

/**
 * One signed delivery per terminal transition, to a real HTTP receiver on loopback, from the
 * real daemon: decided, expired and cancelled, the body as docs/callbacks.md describes it.
 */
describe('callback delivery', () => {
  let t: CallbackServer | undefined;
  let receiver: Receiver | undefined;
  let clock: FakeClock;
  afterEach(async () => {
    await receiver?.close();
    await t?.close();
    t = receiver = undefined;
  });

  // The clock starts at real time so the standardwebhooks library's 5-minute tolerance holds.
  async function setup(overrides: Parameters<typeof startCallbackServer>[0] = {}) {
    clock = createFakeClock(Date.now());
    receiver = await startReceiver();
    t = await startCallbackServer(overrides, { clock });
    return { t, receiver };
  }

  /** Checks both signatures and returns the parsed body. */
  function verifySigned(rec: ReceivedCallback): any {
    expect(rec.method).toBe('POST');
    expect(rec.headers['content-type']).toBe('application/json');
    const ts = rec.headers['webhook-timestamp'] as string;
    expect(ts).toMatch(/^\d+$/);
    expect(Number(ts)).toBe(Math.floor(clock.now() / 1000));
    expect(rec.headers['x-handup-timestamp']).toBe(ts);
    // The official Standard Webhooks verifier (it also checks the timestamp tolerance).
    const verified = new Webhook(SECRET).verify(rec.body, rec.headers as Record<string, string>);
    expect(rec.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    // handup's HMAC, by hand.
    expect(rec.headers['x-handup-signature']).toBe(handupSignature(SECRET, ts, rec.body));
    const body = JSON.parse(rec.body);
    expect(verified).toEqual(body);
    expect(body.id).toBe(rec.headers['webhook-id']);
    return body;
  }

  async function settled(id: string) {
    const d = await waitForDeliveries(t!.api, id, (list) => list.length > 0 && list.every((x) => x.state === 'delivered' || x.state === 'failed'));
    return d;
  }

  it('decided: exactly one signed delivery with the specified body', async () => {
    await setup();
    const r = await createWithCallback(t!.api, `${receiver!.url}/hooks/countersign?src=test`);
    const decided = await decideRequest(t!.api, r, 'approve', { feedback: 'ship it' });
    const [rec] = await receiver!.waitFor(1);
    expect(rec!.path).toBe('/hooks/countersign?src=test');
    const body = verifySigned(rec!);
    expect(Object.keys(body)).toEqual(['v', 'type', 'id', 'time', 'data']);
    expect(body.v).toBe(1);
    expect(body.type).toBe('request.decided');
    expect(body.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(body.time).toBe(new Date(decided.decision.decided_at).toISOString());
    expect(Object.keys(body.data)).toEqual(['request', 'decision']);
    expect(body.data.request).toEqual(decided);
    expectValidRequest(body.data.request);
    expect(body.data.decision).toEqual(decided.decision);
    expect(body.data.decision).toMatchObject({ option: 'approve', outcome: 'approve', feedback: 'ship it', decided_by: 'admin' });

    const [delivery] = await settled(r.id);
    expect(delivery).toMatchObject({ id: body.id, request_id: r.id, type: 'request.decided', state: 'delivered', next_attempt_at: null, last_error: null });
    expect(delivery.attempts).toHaveLength(1);
    expect(delivery.attempts[0]).toMatchObject({ n: 1, status: 200, error_class: null, error: null });
    expect(delivery.attempts[0].latency_ms).toBeGreaterThanOrEqual(0);
    const audit = await auditOf(t!.api, r.id);
    expect(audit.map((a) => [a.event, a.actor])).toEqual([
      ['created', 'admin'],
      ['decided', 'admin'],
      ['callback.delivered', 'callbacks'],
    ]);
    expect(audit[2]!.details).toMatchObject({ delivery_id: body.id, attempts: 1, status: 200 });
    expect(receiver!.received).toHaveLength(1);
  });

  it('expired: one delivery when the deadline passes, carrying the timeout decision', async () => {
    await setup();
    const r = await createWithCallback(t!.api, `${receiver!.url}/hook`, { timeout: '30s', on_timeout: 'deny' });
    clock.advance(30_000);
    const [rec] = await receiver!.waitFor(1);
    const body = verifySigned(rec!);
    expect(body.type).toBe('request.expired');
    expect(body.data.request).toMatchObject({ id: r.id, status: 'expired' });
    expectValidRequest(body.data.request);
    expect(body.data.decision).toMatchObject({ outcome: 'deny', decided_by: 'timeout' });
    expect(body.data.decision).toEqual(body.data.request.decision);
    expect(body.time).toBe(new Date(r.expires_at).toISOString());
    const [delivery] = await settled(r.id);
    expect(delivery).toMatchObject({ type: 'request.expired', state: 'delivered' });
    expect(receiver!.received).toHaveLength(1);
  });

  it('cancelled: one delivery with decision null', async () => {
    await setup();
    const r = await createWithCallback(t!.api, `${receiver!.url}/hook`);
    const res = await t!.api.post(`/v1/requests/${r.id}/cancel`);
    expect(res.status, res.text).toBe(200);
    const [rec] = await receiver!.waitFor(1);
    const body = verifySigned(rec!);
    expect(body.type).toBe('request.cancelled');
    expect(body.data).toEqual({ request: res.body, decision: null });
    const [delivery] = await settled(r.id);
    expect(delivery).toMatchObject({ type: 'request.cancelled', state: 'delivered' });
    // A late decision changes nothing and sends nothing.
    const late = await t!.api.post(`/v1/requests/${r.id}/decision`, { option: 'approve', content_hash: r.content_hash });
    expect(late.status).toBe(409);
    expect(await deliveriesOf(t!.api, r.id)).toHaveLength(1);
    expect(receiver!.received).toHaveLength(1);
  });

  it('a request without callback_url has no deliveries', async () => {
    await setup();
    const res = await t!.api.post('/v1/requests', { title: 'No callback' });
    expect(res.status).toBe(201);
    await decideRequest(t!.api, res.body, 'approve');
    expect(await deliveriesOf(t!.api, res.body.id)).toEqual([]);
    expect(receiver!.connections()).toBe(0);
  });

  it('a native-format request adds "format" and "reply" (the stored native reply)', async () => {
    await setup();
    const frame = {
      method: 'session/event',
      params: {
        sessionId: 's-1',
        event: { type: 'approval.required', seq: 7, payload: { id: 'act_1', toolName: 'bash', args: { command: 'ls' }, message: 'bash requires approval' } },
      },
    };
    const created = await t!.api.post(`/v1/formats/ask/requests?callback_url=${encodeURIComponent(`${receiver!.url}/ask`)}`, frame);
    expect(created.status, created.text).toBe(201);
    const r = created.body.request;
    expect(r.callback_url).toBe(`${receiver!.url}/ask`);
    await decideRequest(t!.api, r, 'approve');
    const [rec] = await receiver!.waitFor(1);
    const body = verifySigned(rec!);
    expect(Object.keys(body)).toEqual(['v', 'type', 'id', 'time', 'data', 'format', 'reply']);
    expect(body.format).toBe('ask');
    const stored = await t!.api.get(`/v1/formats/ask/requests/${r.id}/reply`);
    expect(stored.status, stored.text).toBe(200);
    expect(body.reply).toEqual(stored.body.reply);
    expect(body.reply).toMatchObject({ method: 'interaction/approve', params: { sessionId: 's-1', interactionId: 'act_1' } });
  });

  it('without callbacks.secret the delivery is unsigned but keeps its id and timestamps', async () => {
    await setup({ callbacks: { secret: null } });
    const r = await createWithCallback(t!.api, `${receiver!.url}/hook`);
    await decideRequest(t!.api, r, 'deny');
    const [rec] = await receiver!.waitFor(1);
    expect(rec!.headers['webhook-signature']).toBeUndefined();
    expect(rec!.headers['x-handup-signature']).toBeUndefined();
    expect(rec!.headers['webhook-id']).toBe(JSON.parse(rec!.body).id);
    expect(rec!.headers['webhook-timestamp']).toMatch(/^\d+$/);
  });

  it('a plain-text secret signs with its UTF-8 bytes (raw key for Standard Webhooks)', async () => {
    const plain = 'not-a-whsec-secret-but-long-enough';
    await setup({ callbacks: { secret: plain } });
    const r = await createWithCallback(t!.api, `${receiver!.url}/hook`);
    await decideRequest(t!.api, r, 'approve');
    const [rec] = await receiver!.waitFor(1);
    expect(() => new Webhook(plain, { format: 'raw' }).verify(rec!.body, rec!.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(Buffer.from(plain).toString('base64')).verify(rec!.body, rec!.headers as Record<string, string>)).not.toThrow();
    expect(rec!.headers['x-handup-signature']).toBe(handupSignature(plain, rec!.headers['x-handup-timestamp'] as string, rec!.body));
  });

  it('GET /v1/requests/{id}/deliveries: admin only, 404 for an unknown id', async () => {
    await setup();
    const missing = await t!.api.get('/v1/requests/01ARZ3NDEKTSV4RRFFQ69G5FAV/deliveries');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'not_found' });
    const tok = await t!.api.post('/v1/tokens', { name: 'agent' });
    expect(tok.status, tok.text).toBe(201);
    const agent = createApiClient(t!.url, tok.body.token);
    const own = await agent.post('/v1/requests', { title: 'mine', callback_url: `${receiver!.url}/hook` });
    expect(own.status, own.text).toBe(201);
    const forbidden = await agent.get(`/v1/requests/${own.body.id}/deliveries`);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchObject({ code: 'forbidden' });
    const none = await t!.api.get(`/v1/requests/${own.body.id}/deliveries`, { token: null });
    expect(none.status).toBe(401);
  });
});

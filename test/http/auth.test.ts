import { afterEach, describe, expect, it } from 'vitest';
import { createFakeClock } from '../helpers/fake-clock.js';
import { loadFixtures } from '../helpers/fixtures.js';
import { expectValidRequest } from '../helpers/upstream-schemas.js';
import { createRequest, expectError, requestCount } from '../helpers/request-api.js';
import { createApiClient, startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectWs } from '../helpers/ws-client.js';

/** Who may call what: the admin token everything, a submit token its own requests. */

const ID = '01KDXB5M000000000000000000';
const HASH = `sha256:${'a'.repeat(64)}`;

/** Every route but health, with a body that would pass validation where it matters. */
const PROTECTED: Array<[string, string, unknown?]> = [
  ['GET', '/v1/openapi.json'],
  ['POST', '/v1/requests', { title: 'x' }],
  ['GET', '/v1/requests'],
  ['GET', `/v1/requests/${ID}`],
  ['GET', `/v1/requests/${ID}/wait?timeout=1s`],
  ['POST', `/v1/requests/${ID}/decision`, { option: 'approve', content_hash: HASH }],
  ['POST', `/v1/requests/${ID}/cancel`, {}],
  ['GET', `/v1/requests/${ID}/audit`],
  ['GET', '/v1/history'],
  ['POST', '/v1/blobs'],
  ['GET', `/v1/blobs/${HASH}`],
  ['GET', '/v1/events'],
  ['POST', '/v1/tokens', { name: 'x' }],
  ['GET', '/v1/tokens'],
  ['DELETE', '/v1/tokens/x'],
  ['GET', '/v1/cluster'],
];

/** Routes a submit token may not use at all: 403 before anything else. */
const ADMIN_ONLY = PROTECTED.filter(
  ([method, path]) =>
    !(method === 'POST' && path === '/v1/requests') &&
    !(method === 'POST' && path === '/v1/blobs') &&
    !/^\/v1\/requests\/[^/]+(\/wait.*|\/cancel)?$/.test(path),
);

describe('auth', () => {
  let t: TestServer;
  afterEach(async () => t?.close());

  function call(token: string | null, method: string, path: string, body?: unknown) {
    const api = createApiClient(t.url, t.adminToken);
    if (method === 'POST' && path === '/v1/blobs') {
      return api.request(method, path, undefined, { token, raw: 'bytes', headers: { 'content-type': 'application/octet-stream' } });
    }
    return api.request(method, path, method === 'POST' ? (body ?? {}) : undefined, { token });
  }

  it('health is public and answers {status: "ok", version, store}', async () => {
    t = await startTestServer();
    const res = await call(null, 'GET', '/v1/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', version: expect.stringMatching(/^\d+\.\d+\.\d+/), store: expect.stringMatching(/^(sqlite|postgres)$/) });
  });

  it.each(PROTECTED)('%s %s without a token is 401 unauthorized', async (method, path, body) => {
    t = await startTestServer();
    expectError(await call(null, method, path, body), 401, 'unauthorized');
    expectError(await call('wrong-token-value', method, path, body), 401, 'unauthorized');
    expect(await requestCount(t.api)).toBe(0);
  });

  it('accepts the scheme case-insensitively and refuses other schemes', async () => {
    t = await startTestServer();
    const api = createApiClient(t.url, '');
    expect((await api.request('GET', '/v1/requests', undefined, { token: null, headers: { authorization: `bearer ${t.adminToken}` } })).status).toBe(200);
    expectError(await api.request('GET', '/v1/requests', undefined, { token: null, headers: { authorization: `Basic ${t.adminToken}` } }), 401, 'unauthorized');
  });

  it.each(ADMIN_ONLY)('a submit token gets 403 on %s %s', async (method, path, body) => {
    t = await startTestServer();
    const bot = await t.submitClient('bot');
    expectError(await call(bot.token, method, path, body), 403, 'forbidden');
  });

  it('a submit token creates, shows, waits on and cancels its own requests', async () => {
    t = await startTestServer();
    const bot = await t.submitClient('ci-bot');
    const created = await bot.api.post('/v1/requests', { title: 'mine' });
    expect(created.status).toBe(201);
    expectValidRequest(created.body);
    const shown = await bot.api.get(`/v1/requests/${created.body.id}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual(created.body);
    const waited = await bot.api.get(`/v1/requests/${created.body.id}/wait?timeout=100ms`);
    expect(waited.status).toBe(200);
    expect(waited.body.status).toBe('pending');
    const cancelled = await bot.api.post(`/v1/requests/${created.body.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expectValidRequest(cancelled.body);
    expect(cancelled.body.status).toBe('cancelled');
  });

  it('a submit token may upload a blob', async () => {
    t = await startTestServer();
    const bot = await t.submitClient('bot');
    const res = await call(bot.token, 'POST', '/v1/blobs');
    expect(res.status).toBe(201);
    expect(res.text).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("someone else's request is 404 to a submit token, for show, wait, cancel and decide", async () => {
    t = await startTestServer();
    const a = await t.submitClient('bot-a');
    const b = await t.submitClient('bot-b');
    const ofA = (await a.api.post('/v1/requests', { title: 'a' })).body;
    const ofAdmin = await createRequest(t.api, { title: 'admin' });
    for (const r of [ofA, ofAdmin]) {
      expectError(await b.api.get(`/v1/requests/${r.id}`), 404, 'not_found');
      expectError(await b.api.get(`/v1/requests/${r.id}/wait?timeout=1s`), 404, 'not_found');
      expectError(await b.api.post(`/v1/requests/${r.id}/cancel`), 404, 'not_found');
    }
    // The 404 is the same as for an id that does not exist at all.
    const missing = await b.api.get(`/v1/requests/${ID}`);
    const foreign = await b.api.get(`/v1/requests/${ofA.id}`);
    expect(foreign.body.error.replace(ofA.id, ID)).toBe(missing.body.error);
    // The admin sees everything; nothing was changed by the refused calls.
    expect((await t.api.get(`/v1/requests/${ofA.id}`)).body.status).toBe('pending');
    expect((await t.api.get(`/v1/requests/${ofAdmin.id}`)).body.status).toBe('pending');
  });

  it('a revoked token is 401, and its requests stay', async () => {
    t = await startTestServer();
    const bot = await t.submitClient('bot');
    const r = (await bot.api.post('/v1/requests', { title: 'x' })).body;
    expect((await t.api.delete('/v1/tokens/bot')).status).toBe(200);
    expectError(await bot.api.post('/v1/requests', { title: 'y' }), 401, 'unauthorized');
    expectError(await bot.api.get(`/v1/requests/${r.id}`), 401, 'unauthorized');
    expect(await requestCount(t.api)).toBe(1);
    // A new token with the same name is a new submitter: it does not inherit the old requests.
    const again = await t.submitClient('bot');
    expectError(await again.api.get(`/v1/requests/${r.id}`), 404, 'not_found');
  });

  it('an expired token is 401 (fake clock)', async () => {
    const clock = createFakeClock();
    t = await startTestServer({}, { clock });
    const res = await t.api.post('/v1/tokens', { name: 'short', expires: '1h' });
    expect(res.status).toBe(201);
    expect(res.body.expires_at).toBe(res.body.created_at + 3_600_000);
    const bot = createApiClient(t.url, res.body.token);
    clock.advance(3_599_999);
    expect((await bot.post('/v1/requests', { title: 'x' })).status).toBe(201);
    clock.advance(1);
    expectError(await bot.post('/v1/requests', { title: 'y' }), 401, 'unauthorized');
    expect(await requestCount(t.api)).toBe(1);
  });

  it('source.integration is the token name for a submit token, null for the admin', async () => {
    t = await startTestServer();
    const bot = await t.submitClient('deploy-bot');
    const viaToken = await bot.api.post('/v1/requests', { title: 'x', source: { integration: 'forged', agent: 'codex' } });
    expect(viaToken.status).toBe(201);
    expectValidRequest(viaToken.body);
    expect(viaToken.body.source).toMatchObject({ integration: 'deploy-bot', agent: 'codex' });
    const viaAdmin = await createRequest(t.api, { title: 'x', source: { integration: 'forged' } });
    expect(viaAdmin.source.integration).toBeNull();
    // The overwrite holds in storage too, not just in the create answer.
    expect((await t.api.get(`/v1/requests/${viaToken.body.id}`)).body.source.integration).toBe('deploy-bot');
  });

  it('rate limit: the 4th create in a minute is 429 rate_limited and nothing is stored', async () => {
    const clock = createFakeClock();
    t = await startTestServer({ requests: { max_per_minute: 3 } }, { clock });
    const bot = await t.submitClient('bot');
    for (let i = 0; i < 3; i++) expect((await bot.api.post('/v1/requests', { title: `r${i}` })).status).toBe(201);
    expectError(await bot.api.post('/v1/requests', { title: 'r3' }), 429, 'rate_limited', 'bot');
    expect(await requestCount(t.api)).toBe(3);

    // Per token: another token and the admin are not limited by it.
    const other = await t.submitClient('other');
    expect((await other.api.post('/v1/requests', { title: 'o' })).status).toBe(201);
    for (let i = 0; i < 5; i++) expect((await t.api.post('/v1/requests', { title: `admin${i}` })).status).toBe(201);
    expect(await requestCount(t.api)).toBe(9);

    // A rolling minute: once the first attempts leave the window, the token may create again.
    clock.advance(60_000);
    expect((await bot.api.post('/v1/requests', { title: 'later' })).status).toBe(201);
  });

  it('rate limit: counted after validation and before dedupe (invalid bodies cost nothing, dedupe hits count)', async () => {
    t = await startTestServer({ requests: { max_per_minute: 3 } }, { clock: createFakeClock() });
    const bot = await t.submitClient('bot');
    for (let i = 0; i < 5; i++) expectError(await bot.api.post('/v1/requests', { bogus: i }), 400, 'invalid_request', 'title');
    for (let i = 0; i < 5; i++) expectError(await bot.api.post('/v1/formats/ask/requests', { nope: i }), 400, 'invalid_frame');
    expect((await bot.api.post('/v1/requests', { title: 'r', dedupe_key: 'k' })).status).toBe(201);
    expect((await bot.api.post('/v1/requests', { title: 'r', dedupe_key: 'k' })).status).toBe(200);
    expect((await bot.api.post('/v1/requests', { title: 'r', dedupe_key: 'k' })).status).toBe(200);
    expectError(await bot.api.post('/v1/requests', { title: 'r', dedupe_key: 'k' }), 429, 'rate_limited');
    expect(await requestCount(t.api)).toBe(1);
  });

  describe('a bridge socket lasts only as long as its token', () => {
    const askFrame = (n: number) => {
      const frame = structuredClone(loadFixtures('ask').find(([file]) => file === 'e2e-request.json')![1].frame);
      frame.params.event.payload.id = `act_${n}`;
      return frame;
    };

    it('a token revoked while its socket is open: the next frame is refused (unauthorized, close 4401) and nothing is stored', async () => {
      t = await startTestServer();
      const bot = await t.submitClient('bot');
      const bridge = await connectWs(`${t.wsUrl}/v1/formats/ask/ws`, bot.token);
      bridge.send(askFrame(1));
      expect(await bridge.next()).toMatchObject({ type: 'countersign.accepted' });
      expect((await t.api.delete('/v1/tokens/bot')).status).toBe(200);
      bridge.send(askFrame(2));
      expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'unauthorized' });
      expect(await bridge.closed).toBe(4401);
      expect(await requestCount(t.api)).toBe(1);
    });

    it('a token that expires while its socket is open: the same (fake clock)', async () => {
      const clock = createFakeClock();
      t = await startTestServer({}, { clock });
      const res = await t.api.post('/v1/tokens', { name: 'short', expires: '1h' });
      const bridge = await connectWs(`${t.wsUrl}/v1/formats/ask/ws`, res.body.token);
      clock.advance(3_600_000);
      bridge.send(askFrame(1));
      expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'unauthorized' });
      expect(await bridge.closed).toBe(4401);
      expect(await requestCount(t.api)).toBe(0);
    });

    it('a socket that only waits for replies is closed at the next ping after the revocation', async () => {
      t = await startTestServer({ events: { ping_interval: '100ms' } });
      const bot = await t.submitClient('bot');
      const bridge = await connectWs(`${t.wsUrl}/v1/formats/ask/ws`, bot.token);
      bridge.send(askFrame(1));
      expect(await bridge.next()).toMatchObject({ type: 'countersign.accepted' });
      expect((await t.api.delete('/v1/tokens/bot')).status).toBe(200);
      expect(await bridge.closed).toBe(4401);
      expect(bridge.messages.at(-1)).toMatchObject({ type: 'countersign.error', code: 'unauthorized' });
    });
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { expectValidRequest } from '../helpers/upstream-schemas.js';
import { createRequest, decide, expectError } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** GET /v1/requests/{id}/wait: the long-poll (docs/api.md). Real clock, real server. */
describe('long-poll wait', () => {
  let t: TestServer;
  afterEach(async () => t?.close());

  it('returns the decided record once the decision commits', async () => {
    t = await startTestServer();
    const r = await createRequest(t.api, { title: 'Deploy' });
    // A long own timeout: the wait can only end early because of the decision.
    const waiting = t.api.get(`/v1/requests/${r.id}/wait?timeout=60s`);
    // The waiter is registered once the server has seen the wait.
    await expect.poll(() => t.server.deps.waiters.count()).toBe(1);
    const [decided, waited] = await Promise.all([decide(t.api, r, 'approve'), waiting]);
    expect(decided.status).toBe(200);
    expect(waited.status, waited.text).toBe(200);
    expectValidRequest(waited.body);
    expect(waited.body.status).toBe('approved');
    expect(waited.body).toEqual(decided.body);
    expect(t.server.deps.waiters.count()).toBe(0);
  });

  it('wakes every waiter of the request, and on cancel too', async () => {
    t = await startTestServer();
    const r = await createRequest(t.api, { title: 'Deploy' });
    const waits = [1, 2, 3].map(() => t.api.get(`/v1/requests/${r.id}/wait?timeout=60s`));
    await expect.poll(() => t.server.deps.waiters.count()).toBe(3);
    expect((await t.api.post(`/v1/requests/${r.id}/cancel`)).status).toBe(200);
    for (const w of await Promise.all(waits)) {
      expect(w.status).toBe(200);
      expectValidRequest(w.body);
      expect(w.body.status).toBe('cancelled');
    }
  });

  it('stops waiting as soon as the client hangs up, on every route that holds a reply', async () => {
    t = await startTestServer();
    const r = await createRequest(t.api, { title: 'Deploy' });
    const hook = (id: string) => ({
      session_id: 's-1',
      cwd: '/tmp',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'npm run deploy' },
      tool_use_id: id,
    });
    const held: Array<[string, string, unknown?]> = [
      ['GET', `/v1/requests/${r.id}/wait?timeout=60s`],
      ['POST', '/v1/formats/claude-code/hook?wait=10m', hook('toolu_gone_1')],
      ['POST', '/v1/formats/claude-code/requests?wait=60s', hook('toolu_gone_2')],
    ];
    const native = await t.api.post('/v1/formats/claude-code/requests', hook('toolu_gone_3'));
    expect(native.status, native.text).toBe(201);
    held.push(['GET', `/v1/formats/claude-code/requests/${native.body.request.id}/reply?wait=60s`]);
    for (const [method, path, body] of held) {
      const gone = new AbortController();
      const call = fetch(`${t.url}${path}`, {
        method,
        signal: gone.signal,
        headers: { authorization: `Bearer ${t.adminToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      }).catch((err: Error) => err);
      await expect.poll(() => t.server.deps.waiters.count(), { message: path }).toBe(1);
      gone.abort();
      expect(await call).toBeInstanceOf(Error);
      // Long before any of these waits (a minute and more) runs out.
      await expect.poll(() => t.server.deps.waiters.count(), { message: path, timeout: 5_000 }).toBe(0);
    }
    // The requests themselves are untouched: a client that hangs up withdraws nothing.
    expect((await t.api.get(`/v1/requests/${r.id}`)).body.status).toBe('pending');
  });

  it('stops waiting when the client hung up before the wait began (while the request was being stored)', async () => {
    t = await startTestServer();
    const intake = t.server.deps.intake;
    const submit = intake.submit.bind(intake);
    let entered!: () => void;
    const inSubmit = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    intake.submit = async (...args) => {
      entered();
      await released;
      return submit(...args);
    };
    const gone = new AbortController();
    const call = fetch(`${t.url}/v1/formats/claude-code/hook?wait=10m`, {
      method: 'POST',
      signal: gone.signal,
      headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        session_id: 's-1',
        cwd: '/tmp',
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'npm run deploy' },
        tool_use_id: 'toolu_early',
      }),
    }).catch((err: Error) => err);
    await inSubmit;
    gone.abort();
    expect(await call).toBeInstanceOf(Error);
    // The server has seen the connection close before the request is stored and the wait begins.
    await new Promise((resolve) => setTimeout(resolve, 200));
    release();
    await expect.poll(() => t.count('requests'), { timeout: 5_000 }).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(t.server.deps.waiters.count()).toBe(0);
  });

  it('answers at once for a request that is already decided', async () => {
    t = await startTestServer();
    const r = await createRequest(t.api, { title: 'Deploy' });
    await decide(t.api, r, 'deny');
    const res = await t.api.get(`/v1/requests/${r.id}/wait?timeout=60s`);
    expect(res.status).toBe(200);
    expectValidRequest(res.body);
    expect(res.body.status).toBe('denied');
  });

  it('returns the still-pending record when its own timeout passes', async () => {
    t = await startTestServer();
    const r = await createRequest(t.api, { title: 'Deploy' });
    const res = await t.api.get(`/v1/requests/${r.id}/wait?timeout=300ms`);
    expect(res.status, res.text).toBe(200);
    expectValidRequest(res.body);
    expect(res.body).toEqual(r);
    expect(t.server.deps.waiters.count()).toBe(0);
  });

  it('answers open waits with the pending record when the daemon shuts down', async () => {
    t = await startTestServer();
    const r = await createRequest(t.api, { title: 'Deploy' });
    const waiting = t.api.get(`/v1/requests/${r.id}/wait?timeout=60s`);
    await expect.poll(() => t.server.deps.waiters.count()).toBe(1);
    const closing = t.close();
    const res = await waiting;
    await closing;
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('pending');
  });

  it('404 for an unknown id', async () => {
    t = await startTestServer();
    expectError(await t.api.get('/v1/requests/01KDXB5M000000000000000000/wait?timeout=1s'), 404, 'not_found');
    expect(t.server.deps.waiters.count()).toBe(0);
  });

  it("a submit token waits on its own request; someone else's is 404", async () => {
    t = await startTestServer();
    const mine = await t.submitClient('bot-a');
    const other = await t.submitClient('bot-b');
    const own = await mine.api.post('/v1/requests', { title: 'mine' });
    const admins = await createRequest(t.api, { title: 'admin' });
    const waiting = mine.api.get(`/v1/requests/${own.body.id}/wait?timeout=60s`);
    await expect.poll(() => t.server.deps.waiters.count()).toBe(1);
    await decide(t.api, own.body, 'approve');
    const res = await waiting;
    expect(res.status).toBe(200);
    expectValidRequest(res.body);
    expect(res.body.status).toBe('approved');

    expectError(await other.api.get(`/v1/requests/${own.body.id}/wait?timeout=1s`), 404, 'not_found');
    expectError(await mine.api.get(`/v1/requests/${admins.id}/wait?timeout=1s`), 404, 'not_found');
    expect(t.server.deps.waiters.count()).toBe(0);
  });

  it.each(['abc', '30', '-1s', '0s', '2y', '400d', ''])('refuses timeout=%j with 400 naming query.timeout', async (timeout) => {
    t = await startTestServer();
    const r = await createRequest(t.api, { title: 'Deploy' });
    expectError(await t.api.get(`/v1/requests/${r.id}/wait?timeout=${encodeURIComponent(timeout)}`), 400, 'invalid_request', 'query.timeout');
  });

  it('refuses an unknown query parameter', async () => {
    t = await startTestServer();
    const r = await createRequest(t.api, { title: 'Deploy' });
    expectError(await t.api.get(`/v1/requests/${r.id}/wait?wait=1s`), 400, 'invalid_request', 'query');
  });
});

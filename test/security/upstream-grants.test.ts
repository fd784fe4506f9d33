import { afterEach, describe, expect, it } from 'vitest';
import { createFakeClock } from '../helpers/fake-clock.js';
import { loadFixtures } from '../helpers/fixtures.js';
import { expectError, requestCount, show } from '../helpers/request-api.js';
import { createApiClient, startTestServer, type ApiClient, type TestServer } from '../helpers/test-server.js';
import { expectValidRequest } from '../helpers/upstream-schemas.js';
import { connectWs, type WsClient } from '../helpers/ws-client.js';

/**
 * A submit token must not end its own request approved. Native "resolved
 * elsewhere" follow-ups and `on_timeout: approve` need a grant the admin gives at token
 * creation; cancel and expiry follow-ups and `on_timeout: deny` need none.
 */

const fixture = (format: string, name: string) => {
  const found = loadFixtures(format).find(([file]) => file === name);
  if (!found) throw new Error(`no fixture ${format}/${name}`);
  return found[1];
};

/** Per format: the e2e request frame and a follow-up that approves it "elsewhere". */
const APPROVALS = [
  {
    format: 'ask',
    request: fixture('ask', 'e2e-request.json').frame,
    approve: {
      method: 'session/event',
      params: { sessionId: 's-1', event: { type: 'approval.updated', seq: 9, payload: { id: 'act_1', status: 'approved' } } },
    },
    status: 'approved',
  },
  {
    format: 'roll',
    request: fixture('roll', 'e2e-request.json').frame,
    approve: (() => {
      const f = structuredClone(fixture('roll', 'e2e-cancel.json').frame);
      f.event.event.resolution = { status: 'resolved', decision: 'approve' };
      return f;
    })(),
    status: 'approved',
  },
  {
    format: 'alp',
    request: fixture('alp', 'e2e-request.json').frame,
    approve: (() => {
      const f = structuredClone(fixture('alp', 'e2e-cancel.json').frame);
      f.params.event = { type: 'question.resolved', questionId: 'q_7f3a9c21d4e8', outcome: 'answered', answer: 'Allow once' };
      return f;
    })(),
    status: 'approved',
  },
  {
    format: 'paperclip',
    request: fixture('paperclip', 'e2e-request.json').frame,
    approve: (() => {
      const f = structuredClone(fixture('paperclip', 'e2e-cancel.json').frame);
      f.eventType = 'runtime_request.resolved';
      f.payload = { ...f.payload, action: 'accept' };
      delete f.payload.reason;
      return f;
    })(),
    status: 'approved',
  },
];

describe('upstream resolutions and on_timeout approve need a grant', () => {
  let t: TestServer;
  const sockets: WsClient[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.socket.terminate();
    await t?.close();
  });

  async function ws(path: string, token: string): Promise<WsClient> {
    const c = await connectWs(`${t.wsUrl}${path}`, token);
    sockets.push(c);
    return c;
  }

  async function tokenWith(name: string, grants?: string[]): Promise<{ token: string; api: ApiClient; body: any }> {
    const res = await t.api.post('/v1/tokens', grants === undefined ? { name } : { name, grants });
    expect(res.status, res.text).toBe(201);
    return { token: res.body.token, api: createApiClient(t.url, res.body.token), body: res.body };
  }

  async function audit(id: string): Promise<Array<[string, string]>> {
    const res = await t.api.get(`/v1/requests/${id}/audit`);
    expect(res.status, res.text).toBe(200);
    return res.body.map((e: { event: string; actor: string }) => [e.event, e.actor]);
  }

  const deliveries = () => t.count('callback_deliveries');

  for (const c of APPROVALS) {
    it(`${c.format}: a submit token without resolve_upstream cannot approve its own request over HTTP (403) nor on the bridge socket`, async () => {
      t = await startTestServer({ callbacks: { allowlist: ['hooks.example.com'] } });
      const agent = await tokenWith('agent');
      const created = await agent.api.post(`/v1/formats/${c.format}/requests?callback_url=https://hooks.example.com/cb`, c.request);
      expect(created.status, created.text).toBe(201);
      const id = created.body.request.id;

      expectError(await agent.api.post(`/v1/formats/${c.format}/events`, c.approve), 403, 'forbidden', 'resolve_upstream');
      const bridge = await ws(`/v1/formats/${c.format}/ws`, agent.token);
      bridge.send(c.approve);
      expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'forbidden', error: expect.stringContaining('resolve_upstream') });

      const record = await show(t.api, id);
      expect(record).toMatchObject({ status: 'pending', decision: null });
      expect(await audit(id)).toEqual([['created', 'token:agent']]);
      // No signed request.decided webhook was queued either.
      expect(await deliveries()).toBe(0);
    });

    it(`${c.format}: with resolve_upstream the resolution applies; decided_by stays "upstream", the audit names the token`, async () => {
      t = await startTestServer();
      const relay = await tokenWith('relay', ['resolve_upstream']);
      const created = await relay.api.post(`/v1/formats/${c.format}/requests`, c.request);
      expect(created.status, created.text).toBe(201);
      const res = await relay.api.post(`/v1/formats/${c.format}/events`, c.approve);
      expect(res.status, res.text).toBe(200);
      expectValidRequest(res.body.request);
      expect(res.body.request).toMatchObject({ status: c.status, decision: { decided_by: 'upstream' } });
      expect(await audit(created.body.request.id)).toEqual([
        ['created', 'token:relay'],
        ['decided', 'upstream:relay'],
      ]);
      // Resolved upstream: still no native reply to send back.
      expect((await relay.api.get(`/v1/formats/${c.format}/requests/${created.body.request.id}/reply`)).body.reply).toBeNull();
    });
  }

  it('cancel and expiry follow-ups need no grant; the audit names the token', async () => {
    t = await startTestServer();
    const agent = await tokenWith('agent');
    const roll = fixture('roll', 'e2e-request.json').frame;
    const created = await agent.api.post('/v1/formats/roll/requests', roll);
    expect(created.status, created.text).toBe(201);
    const res = await agent.api.post('/v1/formats/roll/events', fixture('roll', 'e2e-cancel.json').frame);
    expect(res.status, res.text).toBe(200);
    expect(res.body.request).toMatchObject({ status: 'cancelled', decision: null });
    expect(await audit(created.body.request.id)).toEqual([
      ['created', 'token:agent'],
      ['cancelled', 'upstream:agent'],
    ]);

    const alp = await agent.api.post('/v1/formats/alp/requests', fixture('alp', 'e2e-request.json').frame);
    const timedOut = structuredClone(fixture('alp', 'e2e-cancel.json').frame);
    timedOut.params.event.outcome = 'timeout';
    const expired = await agent.api.post('/v1/formats/alp/events', timedOut);
    expect(expired.status, expired.text).toBe(200);
    expect(expired.body.request).toMatchObject({ id: alp.body.request.id, status: 'expired', decision: null });
  });

  it('without the grant, a follow-up naming no request is 404 and one for a request that ended is 202, not 403', async () => {
    t = await startTestServer();
    const agent = await tokenWith('agent');
    const approved = APPROVALS[0]!.approve;
    expectError(await agent.api.post('/v1/formats/ask/events', approved), 404, 'not_found');
    const created = await agent.api.post('/v1/formats/ask/requests', fixture('ask', 'e2e-request.json').frame);
    expect((await agent.api.post(`/v1/requests/${created.body.request.id}/cancel`)).status).toBe(200);
    const ended = await agent.api.post('/v1/formats/ask/events', approved);
    expect(ended.status, ended.text).toBe(202);
    expect(ended.body).toEqual({ ignored: true });
    // On the bridge socket a frame that changes nothing gets no answer at all.
    const bridge = await ws('/v1/formats/ask/ws', agent.token);
    bridge.send(approved);
    bridge.send({ not: 'a frame' });
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'invalid_frame' });
  });

  it('PaperClip runtime_request.resolved is read against the request: an action it could not have taken is 400, nothing changes', async () => {
    t = await startTestServer();
    const relay = await tokenWith('relay', ['resolve_upstream']);
    const created = await relay.api.post('/v1/formats/paperclip/requests', fixture('paperclip', 'e2e-request.json').frame);
    expect(created.status, created.text).toBe(201);
    const resolved = (action: string) => {
      const f = structuredClone(APPROVALS[3]!.approve);
      f.payload.action = action;
      return f;
    };
    for (const action of ['bogus_approve', 'ok', 'submit']) {
      expectError(await relay.api.post('/v1/formats/paperclip/events', resolved(action)), 400, 'invalid_frame', 'payload.action');
    }
    expect((await show(t.api, created.body.request.id)).status).toBe('pending');
    const declined = await relay.api.post('/v1/formats/paperclip/events', resolved('decline'));
    expect(declined.status, declined.text).toBe(200);
    expect(declined.body.request).toMatchObject({ status: 'denied', decision: { option: 'decline', outcome: 'deny', decided_by: 'upstream' } });
  });

  it('a denial from upstream needs the grant too (it is a decision the agent makes about itself)', async () => {
    t = await startTestServer();
    const agent = await tokenWith('agent');
    await agent.api.post('/v1/formats/ask/requests', fixture('ask', 'e2e-request.json').frame);
    const rejected = {
      method: 'session/event',
      params: { sessionId: 's-1', event: { type: 'approval.updated', seq: 9, payload: { id: 'act_1', status: 'rejected' } } },
    };
    expectError(await agent.api.post('/v1/formats/ask/events', rejected), 403, 'forbidden', 'resolve_upstream');
  });

  it('the admin token keeps resolving upstream as before (actor "upstream")', async () => {
    t = await startTestServer();
    const created = await t.api.post('/v1/formats/ask/requests', fixture('ask', 'e2e-request.json').frame);
    const res = await t.api.post('/v1/formats/ask/events', APPROVALS[0]!.approve);
    expect(res.status, res.text).toBe(200);
    expect(res.body.request).toMatchObject({ status: 'approved', decision: { decided_by: 'upstream' } });
    expect(await audit(created.body.request.id)).toEqual([
      ['created', 'admin'],
      ['decided', 'upstream'],
    ]);
  });

  it('on_timeout approve from a submit token without timeout_approve: 403 naming the field and the grant, on handup bodies, the native query and the socket query', async () => {
    t = await startTestServer();
    const agent = await tokenWith('agent');
    const handup = await agent.api.post('/v1/requests', { title: 'rm -rf ~', timeout: '1ms', on_timeout: 'approve' });
    expectError(handup, 403, 'forbidden', 'on_timeout');
    expect(handup.body.error).toContain('timeout_approve');

    const ask = fixture('ask', 'e2e-request.json').frame;
    const native = await agent.api.post('/v1/formats/ask/requests?timeout=1ms&on_timeout=approve', ask);
    expectError(native, 403, 'forbidden', 'query.on_timeout');
    expect(native.body.error).toContain('timeout_approve');
    await expect(connectWs(`${t.wsUrl}/v1/formats/ask/ws?timeout=1ms&on_timeout=approve`, agent.token)).rejects.toMatchObject({ status: 403 });
    expect(await requestCount(t.api)).toBe(0);

    // deny and expire need nothing; nor does an info notice, which always expires whatever it says.
    expect((await agent.api.post('/v1/requests', { title: 'x', timeout: '1m', on_timeout: 'deny' })).status).toBe(201);
    const info = await agent.api.post('/v1/requests', { title: 'FYI', kind: 'info', timeout: '1m', on_timeout: 'approve' });
    expect(info.status, info.text).toBe(201);
    expect(info.body.on_timeout).toBe('expire');
    expect((await agent.api.post('/v1/formats/ask/requests?timeout=1m&on_timeout=expire', ask)).status).toBe(201);
  });

  it('with timeout_approve (and for the admin) on_timeout approve is accepted and applied at expiry', async () => {
    const clock = createFakeClock();
    t = await startTestServer({}, { clock });
    const ci = await tokenWith('ci', ['timeout_approve']);
    const handup = await ci.api.post('/v1/requests', { title: 'nightly', timeout: '1m', on_timeout: 'approve' });
    expect(handup.status, handup.text).toBe(201);
    const native = await ci.api.post('/v1/formats/ask/requests?timeout=1m&on_timeout=approve', fixture('ask', 'e2e-request.json').frame);
    expect(native.status, native.text).toBe(201);
    const bridge = await ws('/v1/formats/ask/ws?timeout=1m&on_timeout=approve', ci.token);
    expect(bridge.socket.readyState).toBe(bridge.socket.OPEN);
    expect((await t.api.post('/v1/requests', { title: 'admin', timeout: '1m', on_timeout: 'approve' })).status).toBe(201);
    clock.advance(60_000);
    await t.server.settled();
    expect(await show(t.api, handup.body.id)).toMatchObject({ status: 'expired', decision: { outcome: 'approve', decided_by: 'timeout' } });
  });

  it('POST /v1/tokens takes grants, refuses unknown ones naming the field, and GET /v1/tokens lists them', async () => {
    t = await startTestServer();
    const bad = await t.api.post('/v1/tokens', { name: 'x', grants: ['resolve_upstream', 'approve_everything'] });
    expectError(bad, 400, 'invalid_request', 'grants[1]');
    expectError(await t.api.post('/v1/tokens', { name: 'x', grants: 'resolve_upstream' }), 400, 'invalid_request', 'grants');
    expect((await t.api.get('/v1/tokens')).body).toEqual([]);

    const plain = await tokenWith('plain');
    expect(plain.body.grants).toEqual([]);
    const both = await tokenWith('relay', ['timeout_approve', 'resolve_upstream', 'timeout_approve']);
    expect(both.body.grants).toEqual(['resolve_upstream', 'timeout_approve']);
    const listed = await t.api.get('/v1/tokens');
    expect(listed.body.map((x: any) => [x.name, x.grants])).toEqual([
      ['plain', []],
      ['relay', ['resolve_upstream', 'timeout_approve']],
    ]);
    const revoked = await t.api.delete('/v1/tokens/relay');
    expect(revoked.body.grants).toEqual(['resolve_upstream', 'timeout_approve']);
  });
});

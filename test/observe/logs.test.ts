import { get as httpGet } from 'node:http';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.js';
import { SECRET, startReceiver, type Receiver } from '../callbacks/callback-kit.js';
import { createFakeClock } from '../helpers/fake-clock.js';
import { loadFixture } from '../helpers/fixtures.js';
import { freshPostgresSchema, TEST_POSTGRES_URL, type FreshPostgres } from '../helpers/postgres.js';
import { createRequest, decide, expectError } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectWs } from '../helpers/ws-client.js';

/**
 * What the daemon logs, captured from its logger: one structured line per lifecycle event,
 * written once, after the commit, with the request's id, format, agent and actor, never the
 * free text; one line per HTTP request with its request id, at a level by outcome.
 */

const ALP_REQUEST = loadFixture('alp', 'e2e-request.json');
const INFO = 30;
const WARN = 40;
const DEBUG = 20;

type Line = Record<string, any> & { level: number; msg: string };

/** A logger whose every line is kept, parsed, with a way to wait for one. */
function captureLog(level = 'debug') {
  const lines: Line[] = [];
  const waiters = new Set<() => void>();
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const text of String(chunk).split('\n')) if (text) lines.push(JSON.parse(text) as Line);
      for (const w of [...waiters]) w();
      done();
    },
  });
  return {
    log: createLogger(level, stream),
    lines,
    text: () => JSON.stringify(lines),
    lifecycle: (id?: string) => lines.filter((l) => l.module === 'lifecycle' && (id === undefined || l.request_id === id)),
    /** Resolves with the first line that matches, once it has been written. */
    waitFor(match: (l: Line) => boolean): Promise<Line> {
      return new Promise((resolve) => {
        const check = () => {
          const found = lines.find(match);
          if (!found) return;
          waiters.delete(check);
          resolve(found);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

describe('lifecycle lines', () => {
  let t: TestServer | undefined;
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await t?.close();
    await receiver?.close();
    t = receiver = undefined;
  });

  it('one line per event with request id, format, kind, agent and actor; a refused decision logs nothing', async () => {
    const capture = captureLog();
    const clock = createFakeClock();
    t = await startTestServer({}, { log: capture.log, clock });
    const submit = await t.submitClient('ci-bot');

    const r = await createRequest(t.api, { title: 'Deploy', kind: 'command', source: { agent: 'codex' } });
    const res = await decide(t.api, r, 'deny', { feedback: 'the feedback text stays in the audit trail' });
    expect(res.status).toBe(200);
    expectError(await decide(t.api, r, 'approve'), 409, 'not_pending');
    expect(
      capture.lifecycle(r.id).map(({ level, msg, event, request_id, format, kind, agent, actor, option, outcome }) => ({
        level,
        msg,
        event,
        request_id,
        format,
        kind,
        agent,
        actor,
        option,
        outcome,
      })),
    ).toEqual([
      {
        level: INFO,
        msg: 'request created',
        event: 'created',
        request_id: r.id,
        format: 'handup',
        kind: 'command',
        agent: 'codex',
        actor: 'admin',
        option: undefined,
        outcome: undefined,
      },
      {
        level: INFO,
        msg: 'request decided',
        event: 'decided',
        request_id: r.id,
        format: 'handup',
        kind: 'command',
        agent: 'codex',
        actor: 'admin',
        option: 'deny',
        outcome: 'deny',
      },
    ]);
    expect(capture.text()).not.toContain('the feedback text');

    const cancelled = (await submit.api.post('/v1/requests', { title: 'Maybe', kind: 'edit' })).body;
    expect((await submit.api.post(`/v1/requests/${cancelled.id}/cancel`)).status).toBe(200);
    expect(capture.lifecycle(cancelled.id).map((l) => [l.event, l.actor, l.agent, l.kind])).toEqual([
      ['created', 'token:ci-bot', null, 'edit'],
      ['cancelled', 'token:ci-bot', null, 'edit'],
    ]);

    const expiring = await createRequest(t.api, { title: 'Migrate', timeout: '1m', on_timeout: 'expire', source: { agent: 'codex' } });
    clock.advance(60_000);
    await t.server.settled();
    expect(capture.lifecycle(expiring.id).at(-1)).toMatchObject({
      event: 'expired',
      actor: 'timeout',
      agent: 'codex',
      format: 'handup',
      on_timeout: 'expire',
      msg: 'request expired',
    });

    const native = await t.api.post('/v1/formats/alp/requests', ALP_REQUEST.frame);
    expect(native.status, native.text).toBe(201);
    expect(capture.lifecycle(native.body.request.id)).toMatchObject([
      { event: 'created', format: 'alp', agent: ALP_REQUEST.frame.params.event.question.agent, actor: 'admin' },
    ]);
  });

  it('a transaction that rolls back after writing an audit row logs nothing; a committed one is logged after the commit', async () => {
    const capture = captureLog();
    t = await startTestServer({}, { log: capture.log });
    const r = await createRequest(t.api, { title: 'Deploy', source: { agent: 'codex' } });
    const store = t.server.deps.store;
    await expect(
      store.write(async (tx) => {
        await tx.requests.appendAudit(r.id, 'cancelled', 'admin', Date.now());
        throw new Error('rolled back on purpose');
      }),
    ).rejects.toThrow('rolled back on purpose');
    // A row about a request the transaction never read: its format and agent are read after the commit.
    await t.server.deps.requests.note(r.id, 'hook.failed', 'hook:lint', { hook: 'lint', reason: 'timeout', error: 'hook error text' });
    const failed = await capture.waitFor((l) => l.event === 'hook.failed');
    expect(failed).toMatchObject({
      level: WARN,
      msg: 'decide hook failed',
      request_id: r.id,
      format: 'handup',
      agent: 'codex',
      actor: 'hook:lint',
      hook: 'lint',
      reason: 'timeout',
    });
    expect(capture.lifecycle(r.id).map((l) => l.event)).toEqual(['created', 'hook.failed']);
    expect(capture.text()).not.toContain('hook error text');
  });

  it('rule decisions, skipped rules and policy changes', async () => {
    const capture = captureLog();
    t = await startTestServer({}, { log: capture.log });
    expect((await t.api.post('/v1/rules', { id: 'ship-it', match: { title: '^Ship' }, action: 'approve' })).status).toBe(201);
    expect((await t.api.post('/v1/rules', { id: 'asks', match: { agent: 'quizzer' }, action: 'approve' })).status).toBe(201);
    expect(capture.lines.filter((l) => l.event === 'rule.added').map((l) => [l.msg, l.rule_id, l.actor])).toEqual([
      ['rule added', 'ship-it', 'admin'],
      ['rule added', 'asks', 'admin'],
    ]);

    const shipped = await createRequest(t.api, { title: 'Ship the docs', source: { agent: 'writer' } });
    expect(shipped.status).toBe('approved');
    expect(capture.lifecycle(shipped.id).map((l) => [l.event, l.actor, l.rule_id, l.agent])).toEqual([
      ['created', 'admin', undefined, 'writer'],
      ['decided', 'rule:ship-it', 'ship-it', 'writer'],
    ]);

    const question = {
      title: 'Which?',
      kind: 'question',
      source: { agent: 'quizzer' },
      input: { questions: [{ id: 'q', question: 'Which one?', options: [{ label: 'A' }] }] },
    };
    const asked = await createRequest(t.api, question);
    expect(capture.lifecycle(asked.id).map((l) => [l.event, l.actor, l.msg])).toEqual([
      ['created', 'admin', 'request created'],
      ['rule.skipped', 'rule:asks', 'rule skipped'],
    ]);

    expect((await t.api.request('PUT', '/v1/auto', { mode: 'low', for: '1h' })).status).toBe(200);
    expect(capture.lines.find((l) => l.event === 'auto.changed' && l.actor === 'admin')).toMatchObject({
      msg: 'auto mode changed',
      mode: 'low',
      previous: 'off',
      until: expect.any(Number),
    });
  });

  it('a stored rule that expires: one rule expired line, by timeout, with its expiry and not the rule', async () => {
    const capture = captureLog();
    const clock = createFakeClock(Date.UTC(2026, 0, 1));
    t = await startTestServer({}, { log: capture.log, clock });
    const expiresAt = clock.now() + 60_000;
    expect((await t.api.post('/v1/rules', { id: 'brief', match: { title: '^Secret plan' }, action: 'approve', expires_at: expiresAt })).status).toBe(201);
    clock.advance(60_000);
    const line = await capture.waitFor((l) => l.event === 'rule.expired');
    await t.server.settled();
    expect(line).toMatchObject({ level: INFO, module: 'lifecycle', msg: 'rule expired', rule_id: 'brief', actor: 'timeout', expires_at: expiresAt });
    expect(line.request_id).toBeUndefined();
    expect(JSON.stringify(line)).not.toContain('Secret plan');
    expect(capture.lines.filter((l) => l.event === 'rule.expired')).toHaveLength(1);
  });

  it('callbacks delivered and failed, with the format and agent read after the fact; no callback URL, no error text', async () => {
    let calls = 0;
    receiver = await startReceiver(() => (++calls === 1 ? { status: 200 } : { status: 400 }));
    const capture = captureLog();
    t = await startTestServer({ callbacks: { allowlist: ['127.0.0.1'], secret: SECRET } }, { log: capture.log, callbacks: { random: () => 0.5 } });
    const url = `${receiver.url}/hook?sig=url-secret-0123456789`;
    const delivered = await createRequest(t.api, { title: 'One', callback_url: url, source: { agent: 'codex' } });
    expect((await decide(t.api, delivered, 'approve')).status).toBe(200);
    const ok = await capture.waitFor((l) => l.event === 'callback.delivered');
    expect(ok).toMatchObject({
      level: INFO,
      msg: 'callback delivered',
      request_id: delivered.id,
      format: 'handup',
      agent: 'codex',
      actor: 'callbacks',
      status: 200,
      attempts: 1,
      type: 'request.decided',
    });

    const failed = await createRequest(t.api, { title: 'Two', callback_url: url, source: { agent: 'codex' } });
    expect((await decide(t.api, failed, 'deny')).status).toBe(200);
    const bad = await capture.waitFor((l) => l.event === 'callback.failed');
    expect(bad).toMatchObject({
      level: WARN,
      msg: 'callback failed',
      request_id: failed.id,
      format: 'handup',
      agent: 'codex',
      reason: 'rejected',
      status: 400,
    });
    expect(bad.error).toBeUndefined();
    // Logged once, from the audit row.
    expect(capture.lines.filter((l) => l.request_id === failed.id && /callback/.test(l.msg))).toHaveLength(1);
    expect(capture.text()).not.toContain('url-secret');
  });
});

describe('HTTP request lines', () => {
  let t: TestServer | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const completed = (lines: Line[], reqId: string | null) => lines.filter((l) => l.msg === 'request completed' && l.req_id === reqId);

  it('each request gets an id, echoed in X-Request-Id and on its line: successes at debug, refusals at info, no query string', async () => {
    const capture = captureLog();
    t = await startTestServer({}, { log: capture.log });
    const ok = await t.api.get('/v1/requests?agent=codex&limit=5');
    const id = ok.headers.get('x-request-id')!;
    expect(id).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(completed(capture.lines, id)).toEqual([
      expect.objectContaining({ level: DEBUG, method: 'GET', url: '/v1/requests', status: 200, actor: 'admin', ms: expect.any(Number) }),
    ]);

    const missing = await t.api.get('/v1/requests/01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expect(completed(capture.lines, missing.headers.get('x-request-id'))).toMatchObject([
      { level: INFO, status: 404, url: '/v1/requests/01ARZ3NDEKTSV4RRFFQ69G5FAV' },
    ]);
    const denied = await t.api.get('/v1/requests', { token: 'not-a-real-token-at-all' });
    expect(denied.status).toBe(401);
    const line = completed(capture.lines, denied.headers.get('x-request-id'))[0]!;
    expect(line).toMatchObject({ level: INFO, status: 401 });
    expect(line.actor).toBeUndefined();
    expect(capture.text()).not.toContain('not-a-real-token-at-all');
    // Every line a request logs carries its id.
    for (const l of capture.lines.filter((l) => 'method' in l)) expect(l.req_id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(new Set([id, missing.headers.get('x-request-id'), denied.headers.get('x-request-id')]).size).toBe(3);
  });

  it("a caller's well-formed X-Request-Id is kept; anything else is replaced, never logged", async () => {
    const capture = captureLog();
    t = await startTestServer({}, { log: capture.log });
    const given = 'trace-7f3a9c21.d4e8:01';
    const kept = await t.api.request('GET', '/v1/health', undefined, { headers: { 'x-request-id': given } });
    expect(kept.headers.get('x-request-id')).toBe(given);
    expect(completed(capture.lines, given)).toHaveLength(1);

    for (const bad of ['has spaces in it', '"quoted"', `x${'a'.repeat(128)}`, '-leading-dash', 'semi;colon', '%0Ainjected']) {
      const res = await t.api.request('GET', '/v1/health', undefined, { headers: { 'x-request-id': bad } });
      const id = res.headers.get('x-request-id')!;
      expect(id, bad).toMatch(/^[A-Za-z0-9_-]{16}$/);
      expect(completed(capture.lines, id), bad).toHaveLength(1);
    }
    for (const text of ['has spaces', 'quoted', 'leading-dash', 'semi;colon', 'injected', 'a'.repeat(128)]) expect(capture.text()).not.toContain(text);
  });

  it('a URL no route can read (bad percent-encoding, a parameter too long) gets its id, its line and the Host check too', async () => {
    const capture = captureLog();
    t = await startTestServer({}, { log: capture.log });
    for (const path of ['/v1/requests/%zz', `/v1/requests/${'A'.repeat(200)}`]) {
      const res = await t.api.request('GET', path, undefined, { headers: { 'x-request-id': 'myid-3' } });
      expect(res.status, path).toBe(400);
      expect(res.headers.get('x-request-id')).toBe('myid-3');
      expect(completed(capture.lines, 'myid-3').at(-1)).toMatchObject({ level: INFO, status: 400, method: 'GET' });
      // fetch will not send another Host: node:http will.
      const foreign = await new Promise<{ status: number; id: string; body: string }>((resolve, reject) => {
        const req = httpGet(`${t!.url}${path}`, { headers: { host: 'evil.example' } }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode!, id: String(res.headers['x-request-id']), body }));
        });
        req.on('error', reject);
      });
      expect(foreign.status, path).toBe(421);
      expect(JSON.parse(foreign.body).code).toBe('host_not_allowed');
      expect(completed(capture.lines, foreign.id)).toMatchObject([{ status: 421 }]);
    }
    // Generated ids start with a letter or digit, as a caller's must to be kept.
    for (let i = 0; i < 200; i++) expect((await t.api.get('/v1/health')).headers.get('x-request-id')).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{15}$/);
  });

  it('a secret in a path is masked whatever its kind (token, web session); a refused token is named on its line', async () => {
    const capture = captureLog();
    t = await startTestServer({}, { log: capture.log });
    const bot = await t.submitClient('bot');
    const session = (await t.api.request('POST', '/v1/session', { token: t.adminToken }, { token: null, headers: { origin: t.url } })).body.session as string;
    expect(session).toMatch(/^csw_/);
    for (const secret of [session, bot.token]) {
      const res = await t.api.get(`/v1/requests/${secret}`);
      expect(completed(capture.lines, res.headers.get('x-request-id'))).toMatchObject([{ url: '/v1/requests/[redacted]' }]);
    }
    for (const secret of [session, bot.token]) expect(capture.text()).not.toContain(secret.slice(4));
    const refused = await bot.api.get('/v1/tokens');
    expect(refused.status).toBe(403);
    expect(completed(capture.lines, refused.headers.get('x-request-id'))).toMatchObject([{ status: 403, actor: 'token:bot' }]);
  });

  it("a decision link's path is a credential: its line names the route, not the token", async () => {
    const capture = captureLog();
    t = await startTestServer({}, { log: capture.log });
    const token = 'link-token-that-must-not-be-logged-0123456789';
    const res = await t.api.request('GET', `/d/${token}`, undefined, { token: null });
    expect(res.status).toBe(404);
    expect(completed(capture.lines, res.headers.get('x-request-id'))).toMatchObject([{ url: '/d/*', status: 404 }]);
    // Asked with a method no route takes (a preflight, a link checker's PUT, a WebDAV client), it matches no route at all.
    for (const method of ['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND']) {
      const other = await t.api.request(method, `/d/${token}`, undefined, { token: null });
      expect(other.status, method).toBe(404);
      expect(completed(capture.lines, other.headers.get('x-request-id')), method).toMatchObject([{ method, url: '/d/*', status: 404 }]);
    }
    // Nor by a path that only reads as the link's (a doubled slash, a capital D, an encoded slash, a dot segment).
    const shaped = '01M8XJJEZYBNQ60E7EFJ8XF9AP.YXBwcm92ZQ.c2hh.team.mfz3k1.bWFjLXRoYXQtbXVzdC1ub3QtbGVhaw';
    for (const path of [`//d/${token}`, `/D/${token}`, `/d%2F${token}`, `/./d/${token}`, `/x/../d/${token}`, `/elsewhere/${shaped}`, `/d%2f${shaped}`]) {
      const other = await fetch(`${t.url}${path}`);
      expect(completed(capture.lines, other.headers.get('x-request-id')), path).toMatchObject([{ url: '/d/*' }]);
    }
    expect(capture.text()).not.toContain(token);
    expect(capture.text()).not.toContain('bWFjLXRoYXQtbXVzdC1ub3QtbGVhaw');
  });

  it('at log level info, successes write nothing and refusals one line', async () => {
    const capture = captureLog('info');
    t = await startTestServer({}, { log: capture.log });
    expect((await t.api.get('/v1/health')).status).toBe(200);
    const refused = await t.api.get('/v1/nothing-here');
    expect(refused.status).toBe(404);
    expect(capture.lines.filter((l) => l.msg === 'request completed').map((l) => [l.status, l.req_id])).toEqual([[404, refused.headers.get('x-request-id')]]);
  });
});

describe.skipIf(!TEST_POSTGRES_URL)('lifecycle lines with two daemons on one PostgreSQL database', () => {
  let db: FreshPostgres | undefined;
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0).reverse()) await s.close();
    await db?.drop();
    db = undefined;
  });

  it('only the daemon that made a change logs it', async () => {
    db = await freshPostgresSchema();
    const [la, lb] = [captureLog(), captureLog()];
    const a = await startTestServer({ storage: { url: db.url } }, { log: la.log });
    servers.push(a);
    const b = await startTestServer({ storage: { url: db.url } }, { log: lb.log });
    servers.push(b);
    const heard = await connectWs(`${a.wsUrl}/v1/events`, a.adminToken);
    const r = await createRequest(a.api, { title: 'Made on A', source: { agent: 'codex' } });
    expect((await decide(b.api, r, 'approve')).status).toBe(200);
    await heard.nextMatching((e) => e.type === 'request.decided' && e.request.id === r.id);
    heard.socket.close();
    expect(la.lifecycle(r.id).map((l) => l.event)).toEqual(['created']);
    // B read the request in its own transaction: the line names its format and agent.
    expect(lb.lifecycle(r.id)).toMatchObject([{ event: 'decided', actor: 'admin', format: 'handup', agent: 'codex' }]);
  });
});

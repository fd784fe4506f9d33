import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { sha256Hex } from '../../src/auth/secrets.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { PAGE_CSP } from '../../src/web/page-headers.js';
import { createFakeClock, type FakeClock } from '../helpers/fake-clock.js';
import { createRequest, expectError } from '../helpers/request-api.js';
import { startTestServer, TEST_STORE, type TestServer } from '../helpers/test-server.js';

/**
 * The server side of the reviewer page over real HTTP and WebSocket: its files and headers,
 * the web session (sign-in, use, expiry, sign-out, rotation, a shared database), the event
 * stream's first-message authentication, and the headers of blob downloads.
 */

const sessionRows = (t: TestServer) => t.sql<Record<string, unknown>>('SELECT * FROM web_sessions ORDER BY created_at');

async function signIn(t: TestServer, headers: Record<string, string> = { origin: t.url }): Promise<string> {
  const res = await t.api.request('POST', '/v1/session', { token: t.adminToken }, { token: null, headers });
  expect(res.status, res.text).toBe(200);
  return res.body.session as string;
}

const sessionStatus = async (t: TestServer, secret: string) => (await t.api.request('GET', '/v1/session', undefined, { token: secret })).status;

describe('reviewer page: files and headers', () => {
  let t: TestServer;
  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => t?.close());

  it('serves / without a token, with a strict CSP and no-sniff, no-referrer headers', async () => {
    const res = await t.api.get('/', { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('<script type="module" src="/ui/js/main.js"></script>');
    expect(res.headers.get('content-security-policy')).toBe(PAGE_CSP);
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "object-src 'none'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ]) {
      expect(PAGE_CSP).toContain(directive);
    }
    expect(PAGE_CSP).not.toContain('unsafe');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
  });

  it('has no inline script or style in the HTML', async () => {
    const { text } = await t.api.get('/', { token: null });
    expect(text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/i);
    expect(text).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
  });

  it('serves scripts, styles and the markdown libraries with their types; revalidates by ETag', async () => {
    for (const [path, type] of [
      ['/ui/js/main.js', 'text/javascript; charset=utf-8'],
      ['/ui/app.css', 'text/css; charset=utf-8'],
      ['/ui/icon.svg', 'image/svg+xml'],
      ['/ui/vendor/marked.js', 'text/javascript; charset=utf-8'],
      ['/ui/vendor/purify.js', 'text/javascript; charset=utf-8'],
    ] as const) {
      const res = await t.api.get(path, { token: null });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toBe(type);
      expect(res.headers.get('content-security-policy'), path).toBe(PAGE_CSP);
      expect(res.text, path).not.toContain('sourceMappingURL');
    }
    const first = await t.api.get('/ui/js/main.js', { token: null });
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await t.api.request('GET', '/ui/js/main.js', undefined, { token: null, headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });

  it('serves only files of the page: traversal and unknown names are 404', async () => {
    for (const path of ['/ui/../package.json', '/ui/%2e%2e/package.json', '/ui/..%2fpackage.json', '/ui/js/nope.js', '/ui/', '/ui/js']) {
      const res = await t.api.get(path, { token: null });
      expect(res.status, path).toBe(404);
    }
  });

  it('every blob response is a sandboxed, unsniffed attachment, errors included', async () => {
    const up = await t.api.request('POST', '/v1/blobs', undefined, {
      raw: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
      headers: { 'content-type': 'image/svg+xml' },
    });
    expect(up.status).toBe(201);
    const { token: submit } = await t.submitClient('ci');
    const cases: Array<[string, string | null, number]> = [
      [up.text, t.adminToken, 200],
      [`sha256:${'0'.repeat(64)}`, t.adminToken, 404],
      ['sha256:nothex', t.adminToken, 400],
      [up.text, null, 401],
      [up.text, submit, 403],
    ];
    for (const [hash, token, status] of cases) {
      const res = await t.api.request('GET', `/v1/blobs/${hash}`, undefined, { token });
      expect(res.status, `${hash} ${status}`).toBe(status);
      expect(res.headers.get('content-security-policy'), `${status}`).toBe("sandbox; default-src 'none'");
      expect(res.headers.get('x-content-type-options'), `${status}`).toBe('nosniff');
      expect(res.headers.get('content-disposition'), `${status}`).toBe('attachment');
      expect(res.headers.get('cross-origin-resource-policy'), `${status}`).toBe('same-origin');
    }
    const ok = await t.api.get(`/v1/blobs/${up.text}`);
    expect(ok.headers.get('content-type')).toBe('application/octet-stream');
  });
});

describe('web session', () => {
  let t: TestServer;
  let clock: FakeClock;
  const extra: TestServer[] = [];
  beforeEach(async () => {
    clock = createFakeClock();
    t = await startTestServer({ web: { session_idle_timeout: '10m', session_max_age: '1h' } }, { clock });
  });
  afterEach(async () => {
    for (const s of extra.splice(0)) await s.close();
    await t?.close();
  });

  it('sign-in answers a fresh session secret, never the token, sets no cookie, and stores only its hash', async () => {
    const res = await t.api.request('POST', '/v1/session', { token: t.adminToken }, { token: null, headers: { origin: t.url } });
    expect(res.status, res.text).toBe(200);
    const now = clock.now();
    expect(res.body).toEqual({
      signed_in: true,
      principal: 'admin',
      version: expect.any(String),
      session: expect.stringMatching(/^csw_[\w-]{43}$/),
      expires_at: now + 3_600_000,
      idle_expires_at: now + 600_000,
    });
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.text).not.toContain(t.adminToken);
    const secret = res.body.session as string;
    const second = await signIn(t);
    expect(second).not.toBe(secret);

    const rows = await sessionRows(t);
    expect(rows.map((r) => r.digest)).toEqual([sha256Hex(secret), sha256Hex(second)]);
    expect(rows[0]).toMatchObject({ created_at: now, expires_at: now + 3_600_000, idle_expires_at: now + 600_000, revoked_at: null });
    expect(rows[0]!.credential).toMatch(/^admin:[0-9a-f]{32}$/);
    // Neither the secret nor the token is anywhere in the database files.
    for (const file of readdirSync(t.dataDir).filter((f) => f.startsWith('countersign.db'))) {
      const bytes = readFileSync(join(t.dataDir, file)).toString('latin1');
      expect(bytes, file).not.toContain(secret);
      expect(bytes, file).not.toContain(t.adminToken);
      expect(bytes, file).not.toContain(sha256Hex(t.adminToken));
    }
  });

  it('refuses a wrong token (401), a submit token (403), an empty one (400), a foreign Origin (403) and a session secret (401); nothing stored', async () => {
    const secret = await signIn(t);
    const attempt = (token: string, headers: Record<string, string> = {}) => t.api.request('POST', '/v1/session', { token }, { token: null, headers });
    const wrong = await attempt('not-the-token-0000000000');
    expectError(wrong, 401, 'unauthorized');
    const { token: submit } = await t.submitClient('ci');
    expectError(await attempt(submit), 403, 'forbidden', 'admin token');
    expectError(await attempt('  '), 400, 'invalid_request', 'token');
    expectError(await attempt(t.adminToken, { origin: 'https://evil.example' }), 403, 'forbidden', 'cross-origin');
    expectError(await attempt(t.adminToken, { origin: t.url.replace(/:\d+$/, ':1') }), 403, 'forbidden');
    // A session cannot mint another (it would outlive its own hard end).
    expectError(await attempt(secret), 401, 'unauthorized');
    expect(await sessionRows(t)).toHaveLength(1);
    for (const r of [wrong]) expect(r.headers.get('set-cookie')).toBeNull();
  });

  it('the secret is a bearer credential for the whole admin API; GET /v1/session tells when it ends', async () => {
    const secret = await signIn(t);
    const mine = await t.api.request('GET', '/v1/session', undefined, { token: secret });
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ signed_in: true, principal: 'admin', expires_at: clock.now() + 3_600_000, idle_expires_at: clock.now() + 600_000 });
    const created = await createRequest(t.api, { title: 'Decide me from the page' });
    const decided = await t.api.request(
      'POST',
      `/v1/requests/${created.id}/decision`,
      { option: 'approve', content_hash: created.content_hash },
      { token: secret },
    );
    expect(decided.status, decided.text).toBe(200);
    expect(decided.body.decision.decided_by).toBe('admin');
    // The admin token still works as it always did, and says nothing about a session.
    expect((await t.api.get('/v1/session')).body).toEqual({ signed_in: true, principal: 'admin', version: expect.any(String) });
  });

  it('cookies are never read: a leftover session cookie, even one holding the admin token, is 401', async () => {
    const secret = await signIn(t);
    for (const cookie of [`countersign_session=${t.adminToken}`, `countersign_session=${secret}`, `session=${secret}`]) {
      expectError(await t.api.request('GET', '/v1/requests', undefined, { token: null, headers: { cookie, origin: t.url } }), 401, 'unauthorized');
      expectError(await t.api.request('POST', '/v1/requests', { title: 'x' }, { token: null, headers: { cookie, origin: t.url } }), 401, 'unauthorized');
    }
  });

  it('sign-out ends the session on the daemon; other sessions stay; without a credential it is 401', async () => {
    const one = await signIn(t);
    const two = await signIn(t);
    expect((await t.api.request('DELETE', '/v1/session', undefined, { token: one })).status).toBe(204);
    expect(await sessionStatus(t, one)).toBe(401);
    expect(await sessionStatus(t, two)).toBe(200);
    expect((await sessionRows(t)).find((r) => r.digest === sha256Hex(one))!.revoked_at).toBe(clock.now());
    expectError(await t.api.request('DELETE', '/v1/session', undefined, { token: one }), 401, 'unauthorized');
    expectError(await t.api.request('DELETE', '/v1/session', undefined, { token: null }), 401, 'unauthorized');
  });

  it('ends after the idle timeout without use, slides with use, and ends at the max age whatever the use', async () => {
    const idle = await signIn(t);
    const busy = await signIn(t);
    clock.advance(9 * 60_000);
    expect(await sessionStatus(t, busy)).toBe(200);
    clock.advance(60_000);
    expect(await sessionStatus(t, idle)).toBe(401);
    // Used 9 minutes in, it lives 10 minutes from then, and so on, but never past the hour.
    for (let minute = 18; minute < 60; minute += 9) {
      clock.set(((await sessionRows(t))[0]!.created_at as number) + minute * 60_000);
      expect(await sessionStatus(t, busy), `minute ${minute}`).toBe(200);
    }
    clock.set((await sessionRows(t)).find((r) => r.digest === sha256Hex(busy))!.expires_at as number);
    expect(await sessionStatus(t, busy)).toBe(401);
    // A new sign-in forgets sessions that ended.
    await signIn(t);
    expect(await sessionRows(t)).toHaveLength(1);
  });

  it('a rotated admin token ends the sessions made with the old one for good, even if the old token comes back; a restart with the same token does not', async () => {
    const secret = await signIn(t);
    const dataDir = t.dataDir;
    await t.server.close();
    const same = await startTestServer({ data_dir: dataDir, web: { session_idle_timeout: '10m', session_max_age: '1h' } }, { clock });
    extra.push(same);
    expect(await sessionStatus(same, secret)).toBe(200);
    await same.server.close();
    const rotated = await startTestServer({ data_dir: dataDir, admin_token: 'a-brand-new-admin-token-0987654321' }, { clock });
    extra.push(rotated);
    // Nobody presents the old session while the new token is in force; it ends all the same.
    await expect.poll(async () => (await sessionRows(rotated)).length).toBe(0);
    await rotated.server.close();
    // The old token back: its old sessions stay ended.
    const back = await startTestServer({ data_dir: dataDir, web: { session_idle_timeout: '10m', session_max_age: '1h' } }, { clock });
    extra.push(back);
    expect(await sessionStatus(back, secret)).toBe(401);
  });

  it('a session in use outlives an idle timeout shorter than a minute', async () => {
    const short = await startTestServer({ web: { session_idle_timeout: '2s', session_max_age: '1h' } }, { clock });
    extra.push(short);
    const secret = await signIn(short);
    for (let i = 0; i < 6; i++) {
      clock.advance(1_000);
      expect(await sessionStatus(short, secret), `after ${i + 1} s`).toBe(200);
    }
    clock.advance(2_000);
    expect(await sessionStatus(short, secret)).toBe(401);
  });

  // Several daemons share a database only on PostgreSQL: a SQLite file takes one daemon.
  it.skipIf(TEST_STORE !== 'postgres')('every daemon sharing the database accepts a session another created; a sign-out on one ends it on both', async () => {
    const other = await startTestServer({ data_dir: t.dataDir, web: { session_idle_timeout: '10m', session_max_age: '1h' } }, { clock });
    extra.push(other);
    const secret = await signIn(t);
    expect(await sessionStatus(other, secret)).toBe(200);
    expect((await other.api.request('DELETE', '/v1/session', undefined, { token: secret })).status).toBe(204);
    expect(await sessionStatus(t, secret)).toBe(401);
  });

  // Daemons hear each other only through PostgreSQL's change feed; the SQLite store has no other daemons to tell.
  it.skipIf(TEST_STORE !== 'postgres')("a sign-out on one daemon closes the session's event streams on the others at once", async () => {
    const other = await startTestServer(
      { data_dir: t.dataDir, events: { ping_interval: '1h' }, web: { session_idle_timeout: '10m', session_max_age: '1h' } },
      { clock },
    );
    extra.push(other);
    const secret = await signIn(t);
    const socket = new WebSocket(`${other.wsUrl}/v1/events`, { origin: other.url });
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    const first = new Promise<unknown>((resolve) => socket.once('message', (data) => resolve(JSON.parse(String(data)))));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ type: 'auth', token: secret }));
    expect(await first).toEqual({ type: 'auth.ok' });
    // No ping re-checks the session within the hour: only the sign-out can close the stream.
    expect((await t.api.request('DELETE', '/v1/session', undefined, { token: secret })).status).toBe(204);
    expect(await closed).toBe(4401);
    expect(other.server.deps.hub.size()).toBe(0);
  });

  it('web.session_idle_timeout and web.session_max_age must be durations', () => {
    expect(() => loadConfig({ env: { COUNTERSIGN_WEB_SESSION_IDLE_TIMEOUT: 'soon' } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { COUNTERSIGN_WEB_SESSION_IDLE_TIMEOUT: 'soon' } })).toThrow(/web\.session_idle_timeout/);
    expect(() => loadConfig({ overrides: { web: { session_max_age: '12' } } })).toThrow(/web\.session_max_age/);
    expect(loadConfig({ env: {} }).web).toEqual({ session_idle_timeout: '1h', session_max_age: '12h' });
  });
});

describe('the event stream for the page: authenticated by its first message', () => {
  let t: TestServer;
  let clock: FakeClock;
  const sockets: WebSocket[] = [];
  beforeEach(async () => {
    clock = createFakeClock();
    t = await startTestServer({ events: { ping_interval: '50ms' }, web: { session_idle_timeout: '10m', session_max_age: '1h' } }, { clock });
  });
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.terminate();
    await t?.close();
  });

  interface Peer {
    socket: WebSocket;
    messages: any[];
    /** The next message not yet taken. */
    next(): Promise<any>;
    closed: Promise<{ code: number; reason: string }>;
  }

  /** A socket as a browser opens it: an Origin, no Authorization unless given. Resolves once open, or with the refusal's status. */
  function open(headers: Record<string, string>, origin?: string): Promise<Peer | number> {
    const socket = new WebSocket(`${t.wsUrl}/v1/events`, { headers, ...(origin ? { origin } : {}) });
    sockets.push(socket);
    const messages: any[] = [];
    const waiters: Array<() => void> = [];
    let taken = 0;
    socket.on('message', (data) => {
      messages.push(JSON.parse(String(data)));
      waiters.splice(0).forEach((w) => w());
    });
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.once('close', (code, reason) => resolve({ code, reason: String(reason) })),
    );
    const next = async () => {
      while (taken >= messages.length) {
        await Promise.race([
          new Promise<void>((resolve) => waiters.push(resolve)),
          closed.then(() => {
            throw new Error(`closed; got ${JSON.stringify(messages)}`);
          }),
        ]);
      }
      return messages[taken++];
    };
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve({ socket, messages, next, closed }));
      socket.once('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        res.resume();
      });
      socket.once('error', reject);
    });
  }

  async function browserSocket(): Promise<Peer> {
    const peer = await open({}, t.url);
    if (typeof peer === 'number') throw new Error(`upgrade refused: ${peer}`);
    return peer;
  }

  it('opens from the page\'s origin, sends nothing until {"type":"auth"} with the session secret, then streams', async () => {
    const secret = await signIn(t);
    const peer = await browserSocket();
    const early = await createRequest(t.api, { title: 'Before auth' });
    peer.socket.send(JSON.stringify({ type: 'auth', token: secret }));
    expect(await peer.next()).toEqual({ type: 'auth.ok' });
    const later = await createRequest(t.api, { title: 'After auth' });
    const event = await peer.next();
    expect(event).toMatchObject({ type: 'request.created', request: { id: later.id } });
    expect(JSON.stringify(peer.messages)).not.toContain(early.id);
  });

  it('refuses a wrong secret (4401), a submit token (4403) and a malformed message (4400), each with an error body; none gets an event', async () => {
    const { token: submit } = await t.submitClient('ci');
    const cases: Array<[unknown, number, string, string]> = [
      [{ type: 'auth', token: 'csw_not-a-session-00000000000000000000000000000' }, 4401, 'unauthorized', 'invalid'],
      [{ type: 'auth', token: submit }, 4403, 'forbidden', 'submit token'],
      [{ type: 'hello', token: 'x' }, 4400, 'invalid_request', 'message.type'],
      [{ type: 'auth', token: 'x', extra: 1 }, 4400, 'invalid_request', 'message.extra'],
      ['not json', 4400, 'invalid_request', 'JSON'],
    ];
    for (const [message, code, errorCode, names] of cases) {
      const peer = await browserSocket();
      peer.socket.send(typeof message === 'string' ? message : JSON.stringify(message));
      const error = await peer.next();
      expect(error, JSON.stringify(message)).toMatchObject({ code: errorCode, error: expect.stringContaining(names) });
      expect((await peer.closed).code, JSON.stringify(message)).toBe(code);
    }
    expect(t.server.deps.hub.size()).toBe(0);
  });

  it('closes a socket that says nothing within 10 s', async () => {
    const peer = await browserSocket();
    clock.advance(10_000);
    expect(await peer.next()).toMatchObject({ code: 'unauthorized', error: expect.stringContaining('no auth message') });
    expect((await peer.closed).code).toBe(4401);
  });

  it('without a token: 403 from another origin (even another port of this host), 401 with no Origin; a cookie is no token', async () => {
    const secret = await signIn(t);
    expect(await open({}, 'https://evil.example')).toBe(403);
    expect(await open({}, t.url.replace(/:\d+$/, ':1'))).toBe(403);
    expect(await open({})).toBe(401);
    expect(await open({ cookie: `countersign_session=${t.adminToken}` })).toBe(401);
    // API clients still authenticate the upgrade with the header, a session secret included.
    expect(typeof (await open({ authorization: `Bearer ${t.adminToken}` }))).toBe('object');
    expect(typeof (await open({ authorization: `Bearer ${secret}` }))).toBe('object');
  });

  it('an open stream keeps a session in use even when its idle timeout is shorter than the ping interval', async () => {
    // The real clock: the session must be kept alive by the stream alone, over real time.
    const short = await startTestServer({ events: { ping_interval: '1h' }, web: { session_idle_timeout: '1s', session_max_age: '1h' } });
    try {
      const secret = await signIn(short);
      const socket = new WebSocket(`${short.wsUrl}/v1/events`, { origin: short.url });
      sockets.push(socket);
      const first = new Promise<unknown>((resolve) => socket.once('message', (data) => resolve(JSON.parse(String(data)))));
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      socket.send(JSON.stringify({ type: 'auth', token: secret }));
      expect(await first).toEqual({ type: 'auth.ok' });
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(socket.readyState).toBe(WebSocket.OPEN);
      expect(await sessionStatus(short, secret)).toBe(200);
    } finally {
      await short.close();
    }
  });

  it("sign-out closes the session's streams at once; expiry closes them at the next ping", async () => {
    const out = await signIn(t);
    const stale = await signIn(t);
    const [a, b] = [await browserSocket(), await browserSocket()];
    a.socket.send(JSON.stringify({ type: 'auth', token: out }));
    b.socket.send(JSON.stringify({ type: 'auth', token: stale }));
    expect(await a.next()).toEqual({ type: 'auth.ok' });
    expect(await b.next()).toEqual({ type: 'auth.ok' });
    await expect.poll(() => t.server.deps.hub.size()).toBe(2);

    expect((await t.api.request('DELETE', '/v1/session', undefined, { token: out })).status).toBe(204);
    expect((await a.closed).code).toBe(4401);

    // An open stream counts as use (each ping checks the session and slides it): the session
    // outlives its idle timeout while the page is connected, but not its hard end.
    const row = async () => (await sessionRows(t)).find((r) => r.digest === sha256Hex(stale))!;
    for (let i = 0; i < 3; i++) {
      clock.advance(5 * 60_000);
      await expect.poll(async () => Number((await row()).last_seen_at)).toBe(clock.now());
    }
    expect(b.socket.readyState).toBe(WebSocket.OPEN);
    expect(await sessionStatus(t, stale)).toBe(200);
    clock.set((await row()).expires_at as number);
    expect((await b.closed).code).toBe(4401);
    expect(t.server.deps.hub.size()).toBe(0);
  });
});

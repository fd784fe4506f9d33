import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { runCli } from '../helpers/cli-process.js';
import { createFakeClock } from '../helpers/fake-clock.js';
import { expectError } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Issue 10, item 9: a DNS-rebinding page reaches the daemon under its own host name, so requests
 * whose Host is not one of the daemon's names are refused (421); failed authentication is
 * throttled per client address; short admin tokens are refused at start.
 */

interface RawResponse {
  status: number;
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

/** One HTTP request with a Host header of our choosing (fetch does not let a caller set it). */
function rawRequest(
  base: string,
  path: string,
  { host, token, method = 'GET' }: { host?: string | null; token?: string; method?: string },
): Promise<RawResponse> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (host) headers.host = host;
    const req = httpRequest(url, { method, headers, setHost: host !== null && host === undefined }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // keep the text
        }
        resolve({ status: res.statusCode!, body, headers: res.headers });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

function wsUpgrade(url: string, opts: { host?: string; token: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${opts.token}` };
    if (opts.host) headers.host = opts.host;
    const socket = new WebSocket(url, { headers });
    socket.once('open', () => {
      socket.terminate();
      resolve(101);
    });
    socket.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode!);
      socket.terminate();
    });
    socket.once('error', reject);
  });
}

describe('Host check', () => {
  let t: TestServer;
  afterEach(async () => t?.close());

  it('refuses a foreign Host with 421 on every route, WebSocket upgrades included, before authentication', async () => {
    t = await startTestServer();
    const port = new URL(t.url).port;
    for (const host of [`attacker.example:${port}`, 'attacker.example', `127.0.0.1.attacker.example:${port}`, `localhost.:${port}x`]) {
      const res = await rawRequest(t.url, '/v1/requests', { host, token: t.adminToken });
      expect(res.status, host).toBe(421);
      expect(res.body).toMatchObject({ code: 'host_not_allowed', error: expect.stringContaining('server.allowed_hosts') });
    }
    // Before authentication: a wrong token under a foreign name learns nothing either.
    expect((await rawRequest(t.url, '/v1/requests', { host: 'attacker.example', token: 'guess' })).status).toBe(421);
    expect((await rawRequest(t.url, '/', { host: 'attacker.example' })).status).toBe(421);
    expect(await wsUpgrade(`${t.wsUrl}/v1/events`, { host: `attacker.example:${port}`, token: t.adminToken })).toBe(421);
    expect(await wsUpgrade(`${t.wsUrl}/v1/formats/ask/ws`, { host: `attacker.example:${port}`, token: t.adminToken })).toBe(421);
    expect(await wsUpgrade(`${t.wsUrl}/v1/events`, { token: t.adminToken })).toBe(101);
  });

  it("accepts the daemon's own names on any port: loopback names, the bind address, public_url's host and server.allowed_hosts", async () => {
    t = await startTestServer({ public_url: 'https://approvals.example.org/', server: { allowed_hosts: ['countersign.lan', '192.168.1.20'] } });
    const port = new URL(t.url).port;
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      'LOCALHOST',
      `[::1]:${port}`,
      'approvals.example.org',
      'approvals.example.org:443',
      'countersign.lan:8080',
      `192.168.1.20:${port}`,
    ]) {
      const res = await rawRequest(t.url, '/v1/requests', { host, token: t.adminToken });
      expect(res.status, host).toBe(200);
    }
    expect((await rawRequest(t.url, '/v1/requests', { host: 'example.org', token: t.adminToken })).status).toBe(421);
  });

  it('a request without a Host header is refused; the health check answers under any name', async () => {
    t = await startTestServer();
    // Node answers an HTTP/1.1 request without Host with 400 itself; either way it is refused.
    expect([400, 421]).toContain((await rawRequest(t.url, '/v1/requests', { host: null, token: t.adminToken })).status);
    expect((await rawRequest(t.url, '/v1/health', { host: '10.0.3.7:7470' })).status).toBe(200);
  });

  it('public_url must be an absolute http(s) URL', async () => {
    await expect(startTestServer({ public_url: 'approvals.example.org' })).rejects.toThrow(/public_url/);
    await expect(startTestServer({ public_url: 'ftp://approvals.example.org/' })).rejects.toThrow(/public_url/);
  });
});

describe('failed authentication is throttled per client address', () => {
  let t: TestServer;
  afterEach(async () => t?.close());

  it('after 10 failures in a minute every attempt from that address is 429, the right token included; a minute later it works again', async () => {
    const clock = createFakeClock();
    t = await startTestServer({}, { clock });
    for (let i = 0; i < 10; i++) expectError(await t.api.get('/v1/requests', { token: `guess-${i}` }), 401, 'unauthorized');
    const limited = await t.api.get('/v1/requests', { token: 'guess-10' });
    expectError(limited, 429, 'rate_limited', 'failed');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // The right token is refused too, or a guess that hits would tell.
    expectError(await t.api.get('/v1/requests'), 429, 'rate_limited');
    expectError(await t.api.post('/v1/session', { token: t.adminToken }, { token: null }), 429, 'rate_limited');
    // Over a bridge socket's upgrade as well.
    expect(await wsUpgrade(`${t.wsUrl}/v1/events`, { token: t.adminToken })).toBe(429);
    // Requests without any token are not guesses: they neither count nor are refused as guesses.
    expectError(await t.api.get('/v1/requests', { token: null }), 401, 'unauthorized');
    expect((await t.api.get('/v1/health', { token: null })).status).toBe(200);

    clock.advance(60_000);
    expect((await t.api.get('/v1/requests')).status).toBe(200);
  });

  it('a revoked or expired token is always 401 and never counts: an agent retrying with one locks nobody out', async () => {
    const clock = createFakeClock();
    t = await startTestServer({}, { clock });
    const revoked = await t.submitClient('old-agent');
    expect((await t.api.delete('/v1/tokens/old-agent')).status).toBe(200);
    const expiring = await t.api.post('/v1/tokens', { name: 'short-lived', expires: '1m' });
    expect(expiring.status, expiring.text).toBe(201);
    clock.advance(60_001);
    for (let i = 0; i < 15; i++) {
      expectError(await t.api.get('/v1/requests', { token: revoked.token }), 401, 'unauthorized', 'revoked');
      expectError(await t.api.post('/v1/requests', { title: 'x' }, { token: expiring.body.token }), 401, 'unauthorized', 'expired');
    }
    expect((await t.api.get('/v1/requests')).status).toBe(200);
    // Guesses still count, and once the address is throttled a retired token still reads 401.
    for (let i = 0; i < 10; i++) expectError(await t.api.get('/v1/requests', { token: `guess-${i}` }), 401, 'unauthorized');
    expectError(await t.api.get('/v1/requests'), 429, 'rate_limited');
    expectError(await t.api.get('/v1/requests', { token: revoked.token }), 401, 'unauthorized', 'revoked');
    expect(await t.count('requests')).toBe(0);
  });

  it('failed sign-ins on the page count too', async () => {
    const clock = createFakeClock();
    t = await startTestServer({}, { clock });
    for (let i = 0; i < 10; i++) expectError(await t.api.post('/v1/session', { token: `guess-${i}` }, { token: null }), 401, 'unauthorized');
    expectError(await t.api.get('/v1/requests'), 429, 'rate_limited');
  });
});

describe('short admin tokens', () => {
  it('serve refuses an admin token under 16 characters with exit code 4, naming admin_token', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-short-token-'));
    try {
      const res = await runCli(['serve'], {
        env: { COUNTERSIGN_PORT: '0', COUNTERSIGN_DATA_DIR: dataDir, COUNTERSIGN_ADMIN_TOKEN: 'hunter2-123456', COUNTERSIGN_LOG_LEVEL: 'silent' },
      });
      expect(res.code).toBe(4);
      expect(res.stderr).toContain('admin_token');
      expect(res.stderr).toContain('COUNTERSIGN_ADMIN_TOKEN');
      expect(res.stderr).toContain('16');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { PAGE_CSP } from '../../src/web/page-headers.js';
import { expectError } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** The server side of the reviewer page: static files and headers, the session cookie, and CSRF. */

describe('reviewer page: files, session cookie, cross-origin guard', () => {
  let t: TestServer;
  beforeEach(async () => {
    t = await startTestServer();
  });
  afterEach(async () => t?.close());

  const origin = () => t.url;
  const cookieOf = (res: { headers: Headers }) => res.headers.get('set-cookie') ?? '';

  async function signedInCookie(): Promise<string> {
    const res = await t.api.request('POST', '/v1/session', { token: t.adminToken }, { token: null, headers: { origin: origin() } });
    expect(res.status, res.text).toBe(200);
    return cookieOf(res).split(';')[0]!;
  }

  describe('the page', () => {
    it('serves / without a token, with a strict CSP and no-sniff, no-referrer headers', async () => {
      const res = await t.api.get('/', { token: null });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.text).toContain('<script type="module" src="/ui/js/main.js"></script>');
      expect(res.headers.get('content-security-policy')).toBe(PAGE_CSP);
      for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'"]) {
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
  });

  describe('sign-in', () => {
    it('sets an HttpOnly, SameSite=Strict, Path=/ cookie for the admin token (Secure only over HTTPS)', async () => {
      const res = await t.api.request('POST', '/v1/session', { token: t.adminToken }, { token: null, headers: { origin: origin() } });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ signed_in: true, principal: 'admin' });
      const cookie = cookieOf(res);
      expect(cookie).toMatch(/^countersign_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict$/);
      expect(res.text).not.toContain(t.adminToken);

      const tls = await t.api.request('POST', '/v1/session', { token: t.adminToken }, { token: null, headers: { 'x-forwarded-proto': 'https' } });
      expect(cookieOf(tls)).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
    });

    it('refuses a wrong token (401), a submit token (403), an empty one (400), and a foreign Origin (403)', async () => {
      const wrong = await t.api.request('POST', '/v1/session', { token: 'not-the-token-0000000000' }, { token: null });
      expectError(wrong, 401, 'unauthorized');
      expect(wrong.headers.get('set-cookie')).toBeNull();

      const { token: submit } = await t.submitClient('ci');
      const res = await t.api.request('POST', '/v1/session', { token: submit }, { token: null });
      expectError(res, 403, 'forbidden', 'admin token');

      expectError(await t.api.request('POST', '/v1/session', { token: '  ' }, { token: null }), 400, 'invalid_request');
      expectError(
        await t.api.request('POST', '/v1/session', { token: t.adminToken }, { token: null, headers: { origin: 'https://evil.example' } }),
        403,
        'forbidden',
      );
    });

    it('GET /v1/session answers 200 with the cookie and 401 without', async () => {
      const cookie = await signedInCookie();
      expect((await t.api.request('GET', '/v1/session', undefined, { token: null, headers: { cookie } })).status).toBe(200);
      expectError(await t.api.get('/v1/session', { token: null }), 401, 'unauthorized');
    });

    it('sign-out clears the cookie; a foreign Origin cannot sign the browser out', async () => {
      const cookie = await signedInCookie();
      expectError(await t.api.request('DELETE', '/v1/session', undefined, { token: null, headers: { cookie, origin: 'https://evil.example' } }), 403, 'forbidden');
      const res = await t.api.request('DELETE', '/v1/session', undefined, { token: null, headers: { cookie, origin: origin() } });
      expect(res.status).toBe(204);
      expect(cookieOf(res)).toMatch(/^countersign_session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0$/);
    });
  });

  describe('cookie-authenticated API calls', () => {
    const body = { title: 'From the page' };

    it('reads with the cookie alone', async () => {
      const cookie = await signedInCookie();
      const res = await t.api.request('GET', '/v1/requests?status=pending', undefined, { token: null, headers: { cookie } });
      expect(res.status, res.text).toBe(200);
    });

    it('changes state only with a same-origin Origin', async () => {
      const cookie = await signedInCookie();
      const noOrigin = await t.api.request('POST', '/v1/requests', body, { token: null, headers: { cookie } });
      expectError(noOrigin, 403, 'forbidden', 'cross-origin');
      const foreign = await t.api.request('POST', '/v1/requests', body, { token: null, headers: { cookie, origin: 'https://evil.example' } });
      expectError(foreign, 403, 'forbidden');
      const sameHostOtherPort = await t.api.request('POST', '/v1/requests', body, {
        token: null,
        headers: { cookie, origin: t.url.replace(/:\d+$/, ':1') },
      });
      expectError(sameHostOtherPort, 403, 'forbidden');
      const own = await t.api.request('POST', '/v1/requests', body, { token: null, headers: { cookie, origin: origin() } });
      expect(own.status, own.text).toBe(201);
    });

    it('leaves bearer requests alone, whatever their Origin', async () => {
      const res = await t.api.request('POST', '/v1/requests', body, { headers: { origin: 'https://evil.example' } });
      expect(res.status, res.text).toBe(201);
    });

    it('a revoked or wrong cookie token is 401', async () => {
      const res = await t.api.request('GET', '/v1/requests', undefined, { token: null, headers: { cookie: 'countersign_session=wrong-token-000000000000' } });
      expectError(res, 401, 'unauthorized');
    });
  });

  describe('the event stream with the cookie', () => {
    /** Resolves with the upgrade outcome: 'open' or the HTTP status that refused it. */
    function upgrade(headers: Record<string, string>, originHeader?: string): Promise<'open' | number> {
      return new Promise((resolve, reject) => {
        const ws = new WebSocket(`${t.wsUrl}/v1/events`, { headers, ...(originHeader ? { origin: originHeader } : {}) });
        ws.on('open', () => {
          ws.close();
          resolve('open');
        });
        ws.on('unexpected-response', (_req, res) => {
          resolve(res.statusCode ?? 0);
          res.resume();
          ws.terminate();
        });
        ws.on('error', reject);
      });
    }

    it('opens from the page origin and is refused from any other origin', async () => {
      const cookie = await signedInCookie();
      expect(await upgrade({ cookie }, origin())).toBe('open');
      expect(await upgrade({ cookie }, 'https://evil.example')).toBe(403);
      expect(await upgrade({ cookie })).toBe(403);
      expect(await upgrade({})).toBe(401);
    });
  });
});

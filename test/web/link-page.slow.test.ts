import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SKIP_BROWSER, launchChromium } from '../helpers/browser.js';
import { startReceiver, type Receiver } from '../callbacks/callback-kit.js';
import { createRequest, show } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { COMMAND, withHooks } from '../notify/notify-kit.js';

/**
 * The decision-link page in real headless Chromium: opening the link decides
 * nothing, the button decides once, a replay and a forged link are refused, and the page runs
 * under its CSP without a single violation (it has no scripts at all).
 */

describe.skipIf(SKIP_BROWSER)('decision-link page (Chromium)', () => {
  let browser: Browser;
  let t: TestServer;
  let receiver: Receiver;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => browser?.close());

  beforeEach(async () => {
    receiver = await startReceiver();
    t = await startTestServer(
      withHooks([{ name: 'team', webhook: `${receiver.url}/hook`, format: 'json', decision_links: true, events: ['request.created'] }], {
        public_url: 'https://approvals.example.com',
      }),
    );
    // Not signed in: the page must work without the inbox or a session.
    context = await browser.newContext({ viewport: { width: 900, height: 800 } });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    problems = [];
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (/Content Security Policy|Refused/i.test(msg.text())) problems.push(`console: ${msg.text()}`);
    });
  });

  afterEach(async () => {
    await context?.close();
    await t?.close();
    await receiver?.close();
    expect(problems).toEqual([]);
  });

  async function linksOf(body: Record<string, unknown>) {
    const r = await createRequest(t.api, body);
    const rec = (await receiver.waitFor(receiver.received.length + 1)).at(-1)!;
    const links = Object.fromEntries(JSON.parse(rec.body).data.links.map((l: any) => [l.option, t.url + new URL(l.url).pathname]));
    return { r, links: links as Record<string, string> };
  }

  it('opening the link decides nothing; the button approves once; a replay is refused', async () => {
    const { r, links } = await linksOf(COMMAND);
    const opened = await page.goto(links.approve!);
    expect(opened!.status()).toBe(200);
    await page.locator('h1', { hasText: 'Deploy staging' }).waitFor();
    expect(await page.locator('pre', { hasText: 'kubectl apply' }).count()).toBe(1);
    expect(await page.locator('script').count()).toBe(0);
    // A preview fetch, a reload: still pending.
    await page.reload();
    expect((await show(t.api, r.id)).status).toBe('pending');

    await Promise.all([page.waitForURL(links.approve!), page.locator('button', { hasText: 'Approve' }).click()]);
    await page.locator('[role="status"]', { hasText: 'Approved' }).waitFor();
    const decided = await show(t.api, r.id);
    expect(decided.status).toBe('approved');
    expect(decided.decision.decided_by).toBe('link:team');

    // The same link again (a second tab, a forwarded message): used.
    const again = await page.goto(links.approve!);
    expect(again!.status()).toBe(409);
    await page.locator('h1', { hasText: 'already used' }).waitFor();
    expect(await page.locator('form').count()).toBe(0);
    const deny = await page.goto(links.deny!);
    expect(deny!.status()).toBe(409);
    await page.locator('h1', { hasText: 'no longer waiting' }).waitFor();
  });

  it('a deny link takes feedback typed on the page', async () => {
    const { r, links } = await linksOf(COMMAND);
    await page.goto(links.deny!);
    await page.locator('textarea[name="feedback"]').fill('Not on a Friday.');
    await page.locator('button', { hasText: 'Deny' }).click();
    await page.locator('[role="status"]', { hasText: 'Denied' }).waitFor();
    expect((await show(t.api, r.id)).decision).toMatchObject({ outcome: 'deny', feedback: 'Not on a Friday.', decided_by: 'link:team' });
  });

  it('the inbox Hooks view lists hooks with their deliveries and mutes; a mute is removed there; #/requests/<id> opens a request', async () => {
    const { r } = await linksOf(COMMAND);
    const mute = (await t.api.post('/v1/mutes', { agent: 'noisy-bot', for: '1h' })).body;
    await page.goto(t.url);
    await page.locator('#token').fill(t.adminToken);
    await page.locator('#signin-button').click();
    await page.locator('#conn[data-state="live"]').waitFor();

    await page.locator('[data-tab="hooks"]').click();
    const card = page.locator('.hook-card[data-hook="team"]');
    await card.waitFor();
    await card.locator('.chip', { hasText: 'decision links' }).waitFor();
    await card.locator('.delivery', { hasText: 'request.created' }).waitFor();
    expect(await card.locator('.delivery a').textContent()).toBe(r.id);
    const row = page.locator(`.mute-row[data-id="${mute.id}"]`);
    await row.locator('.mute-who', { hasText: 'agent noisy-bot' }).waitFor();
    await row.locator('button', { hasText: 'Remove' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await t.api.get('/v1/mutes')).body).toEqual([]);

    // A mute made elsewhere shows up live (mutes.changed on the event stream).
    await t.api.post('/v1/mutes', { session: 'night-batch' });
    await page.locator('.mute-row .mute-who', { hasText: 'session night-batch' }).waitFor();

    // The inbox link in every notification.
    await page.goto(`${t.url}/#/requests/${r.id}`);
    await page.waitForURL(`${t.url}/#/pending/${r.id}`);
    await page.locator('#detail .detail-title', { hasText: 'Deploy staging' }).waitFor();
  });

  it('a forged link shows "not found" and decides nothing', async () => {
    const { r, links } = await linksOf(COMMAND);
    const forged = links.approve!.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    const res = await page.goto(forged);
    expect(res!.status()).toBe(404);
    await page.locator('h1', { hasText: 'Link not found' }).waitFor();
    expect((await show(t.api, r.id)).status).toBe('pending');
  });
});

import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { adapters } from '../../src/adapters/registry.js';
import { launchChromium, signInOnPage, SKIP_BROWSER, openWatchedPage } from '../helpers/browser.js';
import { createRequest } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { TOY_FORMAT, toyAdapter } from '../helpers/toy-adapter.js';

/**
 * The page's filter lists come from the daemon (GET /v1/formats): a format wired in without the
 * registry (test/helpers/toy-adapter.ts) is listed and filtered by with no change to the page.
 */
describe.skipIf(SKIP_BROWSER)('the page lists the formats the daemon serves (Chromium)', () => {
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
    t = await startTestServer({}, { adapters: [...adapters, toyAdapter] });
    ({ context, page, problems } = await openWatchedPage(browser));
  });

  afterEach(async () => {
    await context?.close();
    await t?.close();
    expect(problems).toEqual([]);
  });

  const options = (select: string) => page.locator(`${select} option`).evaluateAll((els) => els.map((e) => (e as HTMLOptionElement).value));

  it('offers the toy format in the format filter and shows only its requests when chosen', async () => {
    await createRequest(t.api, { title: 'A handup request', kind: 'command' });
    const toy = await t.api.post(`/v1/formats/${TOY_FORMAT}/requests`, { question: 'Ship the toy?', id: 'q-1' });
    expect(toy.status, toy.text).toBe(201);
    await signInOnPage(page, t);
    await page.locator('#pending-summary', { hasText: '2 pending' }).waitFor();

    const served = (await t.api.get('/v1/formats')).body;
    expect(await options('#filter-format')).toEqual(['', ...served.formats]);
    expect(await options('#filter-format')).toContain(TOY_FORMAT);
    expect(await options('#filter-kind')).toEqual(['', ...served.kinds]);
    expect(await options('#history-kind')).toEqual(['', ...served.kinds]);

    await page.locator('#filter-format').selectOption(TOY_FORMAT);
    await page.locator('#pending-summary', { hasText: '1 of 2 pending' }).waitFor();
    expect(await page.locator('#pending-list .card-title').allTextContents()).toEqual(['Ship the toy?']);
    expect(await page.locator('#pending-list .card .chip-quiet').allTextContents()).toEqual([TOY_FORMAT]);
  });
});

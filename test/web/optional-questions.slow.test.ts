import { type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SKIP_BROWSER, launchChromium } from '../helpers/browser.js';
import { createRequest, show } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** The decision form with optional questions (input.optional_questions), in real headless Chromium. */

const REQUEST = {
  title: 'Deploy settings for the canary',
  kind: 'question',
  input: {
    questions: [
      { id: 'region', question: 'Which region?', options: [{ label: 'north' }, { label: 'south' }] },
      { id: 'notes', question: 'Anything for the on-call?', allow_free_text: true },
    ],
    optional_questions: ['notes'],
  },
};

describe.skipIf(SKIP_BROWSER)('optional questions on the decision form (Chromium)', () => {
  let browser: Browser;
  let t: TestServer;
  let page: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => browser?.close());
  afterEach(async () => {
    await page?.context().close();
    await t?.close();
    expect(errors.splice(0)).toEqual([]);
  });

  it('marks the optional question and submits without it; the required one is still required', async () => {
    t = await startTestServer();
    const created = await createRequest(t.api, REQUEST);
    page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(t.url);
    await page.locator('#token').fill(t.adminToken);
    await page.locator('#signin-button').click();
    await page.locator('#conn[data-state="live"]').waitFor();
    await page.locator('#pending-list a.card', { hasText: REQUEST.title }).click();

    const notes = page.locator('fieldset[data-question="notes"]');
    const region = page.locator('fieldset[data-question="region"]');
    expect(await notes.locator('legend').textContent()).toContain('optional');
    expect(await region.locator('legend').textContent()).not.toContain('optional');

    const submit = page.locator('#decision-block button[data-option="submit"]');
    await submit.click();
    await page.locator('#decision-block .form-error', { hasText: 'not marked optional' }).waitFor();
    expect(await region.getAttribute('class')).toContain('invalid');
    expect(await notes.getAttribute('class')).not.toContain('invalid');
    expect((await show(t.api, created.id)).status).toBe('pending');

    await region.locator('input[value="south"]').check();
    await submit.click();
    await page.locator('#pending-list a.card', { hasText: REQUEST.title }).waitFor({ state: 'detached' });
    const record = await show(t.api, created.id);
    expect(record.status).toBe('answered');
    expect(record.decision.fields.answers).toEqual({ region: { selected: ['south'] } });
  });
});

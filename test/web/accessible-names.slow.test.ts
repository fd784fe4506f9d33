import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromium, signInOnPage, SKIP_BROWSER, openWatchedPage } from '../helpers/browser.js';
import { createRequest, decide } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { COMMAND_REQUEST, QUESTION_REQUEST } from './sample-requests.js';

/**
 * Accessible names as Chromium computes them (its accessibility tree, over CDP), for every
 * control of the page in each of its states: what a screen reader announces and what tools
 * find a control by. Keyboard hints are not part of a name; they are in aria-keyshortcuts.
 */

const CONTROL_ROLES = new Set([
  'button',
  'link',
  'textbox',
  'searchbox',
  'combobox',
  'checkbox',
  'radio',
  'DisclosureTriangle',
  'tab',
  'switch',
  'menuitem',
  'slider',
  'spinbutton',
  'listbox',
  'Iframe',
]);

interface Control {
  role: string;
  name: string;
  keyshortcuts: string | null;
}

describe.skipIf(SKIP_BROWSER)('accessible names (Chromium)', () => {
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
    ({ context, page, problems } = await openWatchedPage(browser));
  });

  afterEach(async () => {
    await context?.close();
    await t?.close();
    expect(problems).toEqual([]);
  });

  /** Every control Chromium exposes right now, with its computed name. */
  async function controls(): Promise<Control[]> {
    const cdp = await context.newCDPSession(page);
    try {
      const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: any[] };
      return nodes
        .filter((n) => !n.ignored && CONTROL_ROLES.has(n.role?.value))
        .map((n) => ({
          role: n.role.value,
          name: String(n.name?.value ?? ''),
          keyshortcuts: n.properties?.find((p: any) => p.name === 'keyshortcuts')?.value?.value ?? null,
        }));
    } finally {
      await cdp.detach();
    }
  }

  /**
   * Clean: a name at all, no stray whitespace, and no keyboard hint glued on (a control that
   * shows a hint declares it in aria-keyshortcuts, and its name does not end with it).
   */
  async function expectCleanNames(state: string): Promise<Control[]> {
    const all = await controls();
    expect(all.length, state).toBeGreaterThan(0);
    const bad = all.filter(
      (c) =>
        !c.name ||
        c.name !== c.name.trim() ||
        /\s\s|\n/.test(c.name) ||
        (c.keyshortcuts !== null && c.name.toLowerCase().endsWith(c.keyshortcuts.toLowerCase())),
    );
    expect(bad, state).toEqual([]);
    // A hint shown inside a control is hidden from the accessibility tree, and the control names its key.
    const hints = await page.evaluate(() =>
      [...document.querySelectorAll('kbd')]
        .filter((k) => k.closest('button, a, summary, label') && (!k.closest('[aria-hidden="true"]') || !k.closest('[aria-keyshortcuts]')))
        .map((k) => k.closest('button, a, summary, label')!.textContent),
    );
    expect(hints, state).toEqual([]);
    return all;
  }

  const named = (all: Control[], role: string) => all.filter((c) => c.role === role).map((c) => c.name);

  it('every control has a clean name: sign-in, queue, a request, a question, help, history, phone width', async () => {
    await page.goto(t.url);
    await page.locator('#token').waitFor();
    expect(await expectCleanNames('sign-in')).toEqual(
      expect.arrayContaining([
        { role: 'textbox', name: 'Admin token', keyshortcuts: null },
        { role: 'button', name: 'Sign in', keyshortcuts: null },
      ]),
    );

    const command = await createRequest(t.api, COMMAND_REQUEST);
    await createRequest(t.api, QUESTION_REQUEST);
    await signInOnPage(page, t);
    await page.locator('#pending-summary', { hasText: '2 pending' }).waitFor();
    // Cards are named by their title (the rest is their description).
    expect(named(await expectCleanNames('queue'), 'link')).toEqual(expect.arrayContaining([COMMAND_REQUEST.title, QUESTION_REQUEST.title]));

    await page.locator('#pending-list a.card', { hasText: COMMAND_REQUEST.title }).click();
    await page.locator('#decision-block button[data-option="approve"]').waitFor();
    const request = await expectCleanNames('a command request');
    expect(request).toEqual(
      expect.arrayContaining([
        { role: 'button', name: 'Approve', keyshortcuts: 'a' },
        { role: 'button', name: 'Deny', keyshortcuts: 'd' },
        { role: 'button', name: 'Cancel request', keyshortcuts: null },
        { role: 'textbox', name: 'Feedback · optional', keyshortcuts: null },
      ]),
    );
    // Tools find the decision buttons by their names.
    expect(await page.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Deny', exact: true }).count()).toBe(1);

    await page.locator('#pending-list a.card', { hasText: QUESTION_REQUEST.title }).click();
    await page.locator('fieldset[data-question="targets"]').waitFor();
    const question = await expectCleanNames('a question');
    // A choice is named by its label; the recommendation and description describe it.
    expect(named(question, 'checkbox')).toEqual(['staging', 'eu-west', 'us-east']);
    expect(question).toEqual(
      expect.arrayContaining([
        { role: 'button', name: 'Submit', keyshortcuts: 'a' },
        { role: 'button', name: 'Decline', keyshortcuts: 'd' },
      ]),
    );
    expect(await page.getByRole('checkbox', { name: 'staging', exact: true }).count()).toBe(1);

    await page.keyboard.press('?');
    await page.locator('#help[open]').waitFor();
    expect(await expectCleanNames('help')).toEqual(expect.arrayContaining([{ role: 'button', name: 'Close', keyshortcuts: null }]));
    await page.keyboard.press('Escape');
    await page.locator('#help').waitFor({ state: 'hidden' });

    expect((await decide(t.api, command, 'approve')).status).toBe(200);
    await page.locator('nav [data-tab="history"]').click();
    await page.locator('#history-list a.card', { hasText: COMMAND_REQUEST.title }).click();
    await page.locator('#decision-block .status-approved').waitFor();
    await page.locator('#detail summary', { hasText: 'Audit trail' }).click();
    await page.locator('#detail .timeline').waitFor();
    const history = await expectCleanNames('history');
    expect(named(history, 'link')).toContain(COMMAND_REQUEST.title);
    expect(named(history, 'DisclosureTriangle')).toEqual(expect.arrayContaining(['Audit trail', 'Callback deliveries']));

    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator('#detail .back').waitFor();
    expect(await expectCleanNames('phone')).toEqual(expect.arrayContaining([{ role: 'button', name: 'Back', keyshortcuts: null }]));
  });
});

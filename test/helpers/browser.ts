import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import type { TestServer } from './test-server.js';

/** Real headless Chromium for the reviewer-page tests (one browser per test file). */

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// Without the background-networking flags Chromium dials out at start, which a closed network refuses.
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--headless',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// Outside CI a machine without Chromium skips these tests, loudly; in CI (.ci/run installs
// Chromium) a missing browser is a failure, never a skip.
export const SKIP_BROWSER = !existsSync(CHROMIUM) && !process.env.CI;
if (SKIP_BROWSER) console.warn(`reviewer inbox browser tests SKIPPED: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** Collects script errors, JS dialogs (alert/confirm) and CSP or Trusted Types violations of a page. */
export function watchPage(page: Page, problems: string[]): void {
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.type()} ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('console', (msg) => {
    if (/Content Security Policy|Trusted ?Type|TrustedHTML/i.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });
}

/** A fresh context (1280×800 unless told) and page, with a 10 s default timeout, watched by watchPage. */
export async function openWatchedPage(
  browser: Browser,
  options: BrowserContextOptions = {},
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  watchPage(page, problems);
  return { context, page, problems };
}

/** Signs the page in through the form and waits until the live stream is up. */
export async function signInOnPage(page: Page, t: TestServer, token = t.adminToken): Promise<void> {
  await page.goto(t.url);
  await page.locator('#token').fill(token);
  await page.locator('#signin-button').click();
  // Live means the WebSocket opened under the page's CSP and the first resync finished.
  await page.locator('#conn[data-state="live"]').waitFor();
}

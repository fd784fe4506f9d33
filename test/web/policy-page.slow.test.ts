import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SKIP_BROWSER, launchChromium, openWatchedPage } from '../helpers/browser.js';
import { loadFixture } from '../helpers/fixtures.js';
import { createRequest, decide, show } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The page's policy parts in real headless Chromium against the real daemon: the Rules view
 * (list with hits, a new rule checked against history before it is saved, delete, try a
 * request) and "Don't ask again" on the decision form. Same harness as inbox.slow.test.ts.
 */

const CONFIG_RULES = [{ id: 'no-force-push', match: { command: 'git push .*--force' }, action: 'deny', feedback: 'Needs a person.' }];
const source = { agent: 'claude-code', session: 's-1', repo: 'acme/api' };
const command = (shell: string, src: Record<string, unknown> = source) => ({
  title: `Run ${shell}`,
  kind: 'command',
  source: src,
  previews: [{ type: 'command', command: { shell } }],
});

describe.skipIf(SKIP_BROWSER)('policy on the page (Chromium)', () => {
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
    t = await startTestServer({ rules: CONFIG_RULES as never });
    ({ context, page, problems } = await openWatchedPage(browser, { viewport: { width: 1280, height: 900 } }));
  });

  afterEach(async () => {
    await context?.close();
    await t?.close();
    expect(problems).toEqual([]);
  });

  async function signIn(hash = '') {
    await page.goto(t.url + hash);
    await page.locator('#token').fill(t.adminToken);
    await page.locator('#signin-button').click();
    await page.locator('#conn[data-state="live"]').waitFor();
  }

  const ruleRow = (id: string) => page.locator(`#rules-list li.rule[data-id="${id}"]`);

  it('lists rules in evaluation order with hits, checks a new rule against history before saving it, and deletes it', async () => {
    // History: one request the candidate would approve that a person approved, one a person denied.
    await decide(t.api, await createRequest(t.api, command('git status')), 'approve');
    const denied = await createRequest(t.api, command('git status --short'));
    await decide(t.api, denied, 'deny');
    await createRequest(t.api, command('git push origin main --force')); // a hit for the config rule

    await signIn('#/rules');
    await ruleRow('no-force-push').waitFor();
    expect(await ruleRow('no-force-push').locator('.rule-hits').textContent()).toMatch(/^1 hit · /);
    expect(await page.locator('#rules-summary').textContent()).toBe('1 rule, evaluated top to bottom; the first that matches decides.');

    const form = page.locator('#rule-form');
    await form.locator('input[name="id"]').fill('read-only-git');
    await form.locator('input[name="match-agent"]').fill('claude-code');
    await form.locator('input[name="match-command"]').fill('^git status');
    await form.locator('select[name="action"]').selectOption('approve');
    expect(await page.locator('#rule-save').isDisabled()).toBe(true);
    await page.locator('#rule-check').click();
    const summary = page.locator('#rule-simulation .simulation-summary');
    await summary.waitFor();
    expect(await summary.textContent()).toBe('This rule would have approved 2 requests in the last 30 days; 1 of them a person denied.');
    const listed = page.locator('#rule-simulation .disagreements li');
    expect(await listed.count()).toBe(1);
    expect(await listed.locator('a').textContent()).toBe('Run git status --short');
    expect(await listed.locator('a').getAttribute('href')).toBe(`#/history/${denied.id}`);
    expect(await listed.textContent()).toContain('by admin');

    // An edit after the check needs a new check.
    await form.locator('input[name="match-command"]').fill('^git (status|diff)');
    expect(await page.locator('#rule-save').isDisabled()).toBe(true);
    await page.locator('#rule-check').click();
    await summary.waitFor();
    await page.locator('#rule-save').click();
    await ruleRow('read-only-git').waitFor();
    expect(await page.locator('#rules-list li.rule').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id))).toEqual([
      'no-force-push',
      'read-only-git',
    ]);
    const stored = (await t.api.get('/v1/rules')).body[1];
    expect(stored).toMatchObject({ id: 'read-only-git', source: 'stored', action: 'approve', match: { agent: 'claude-code', command: '^git (status|diff)' } });
    expect((await createRequest(t.api, command('git diff'))).decision.rule_id).toBe('read-only-git');

    // Config rules cannot be deleted here; stored ones can, with a second click.
    expect(await ruleRow('no-force-push').locator('button').count()).toBe(0);
    await ruleRow('read-only-git').getByRole('button', { name: 'Delete rule read-only-git' }).click();
    await ruleRow('read-only-git').getByRole('button', { name: 'Yes, delete' }).click();
    await ruleRow('read-only-git').waitFor({ state: 'detached' });
    expect((await t.api.get('/v1/rules')).body.map((r: any) => r.id)).toEqual(['no-force-push']);
  });

  it("refreshes the list when rules change elsewhere, shows the daemon's refusal, and tries a request", async () => {
    await signIn('#/rules');
    await ruleRow('no-force-push').waitFor();
    await t.api.post('/v1/rules', { id: 'from-the-cli', match: { title: '^Nightly' }, action: 'approve' });
    await ruleRow('from-the-cli').waitFor();

    const form = page.locator('#rule-form');
    await form.locator('input[name="id"]').fill('broken');
    await form.locator('input[name="match-command"]').fill('(unclosed');
    await page.locator('#rule-check').click();
    await page.locator('#rule-error', { hasText: 'invalid_rule' }).waitFor();
    expect(await page.locator('#rule-error').textContent()).toContain('match.command: invalid regular expression');
    expect(await page.locator('#rule-save').isDisabled()).toBe(true);

    await page.locator('#rule-test-input').fill(JSON.stringify({ title: 'Nightly build' }));
    await page.getByRole('button', { name: 'Which rule?' }).click();
    await page.locator('#rule-test-result', { hasText: 'Rule from-the-cli would approve it (option "approve").' }).waitFor();
    await page.locator('#rule-test-input').fill(JSON.stringify({ title: 'Something else' }));
    await page.getByRole('button', { name: 'Which rule?' }).click();
    await page.locator('#rule-test-result', { hasText: 'No rule matches' }).waitFor();
    expect(await t.count('requests')).toBe(0);
  });

  it('"Don\'t ask again" offers the scopes the source allows, and an approval with one stores the rule', async () => {
    const created = await createRequest(t.api, command('npm test'));
    await createRequest(t.api, command('make', { agent: 'codex' }));
    await createRequest(t.api, { title: 'Which?', kind: 'question', source, input: { questions: [{ id: 'q', question: 'Which?', allow_free_text: true }] } });
    await signIn();

    const open = async (title: string) => {
      await page.locator('#pending-list a.card', { hasText: title }).click();
      await page.locator('#detail .detail-title', { hasText: title }).waitFor();
    };
    const scopes = () => page.locator('#scope option').evaluateAll((els) => els.map((e) => (e as HTMLOptionElement).value));
    await open('Run make');
    expect(await scopes()).toEqual(['', 'always']);
    await open('Which?');
    expect(await page.locator('#scope').count()).toBe(0);
    await open('Run npm test');
    expect(await scopes()).toEqual(['', 'session', 'project', 'always']);
    // How far "the same action" reaches, before the reviewer picks a scope.
    expect(await page.locator('.scope-action').textContent()).toBe('Remembers npm test followed by any plain words');

    await page.locator('#scope').selectOption('session');
    await page.locator('#decision-block button[data-option="approve"]').click();
    await page.locator('#pending-list a.card', { hasText: 'Run npm test' }).waitFor({ state: 'detached' });
    const decided = await show(t.api, created.id);
    expect(decided.decision).toMatchObject({ scope: 'session', decided_by: 'admin', rule_id: expect.stringMatching(/^scope-/) });
    await page.locator('.toast', { hasText: `rule ${decided.decision.rule_id} saved` }).waitFor();
    expect((await createRequest(t.api, command('npm test'))).decision).toMatchObject({ decided_by: 'rule', rule_id: decided.decision.rule_id });
    expect((await createRequest(t.api, command('npm test', { ...source, session: 's-2' }))).status).toBe('pending');

    // A wire format's request whose title the adapter cut from a longer text: the daemon refuses
    // to remember that title, so the form does not offer it; a one-line text that is the title is.
    const alp = (id: string, body: string) => {
      const f = structuredClone(loadFixture('alp', 'permission-en-always-allow.json').frame);
      Object.assign(f.params.event.question, { id, body });
      return t.api.post('/v1/formats/alp/requests', f);
    };
    expect((await alp('q_long', `reviewer wants to run npm run build -- ${'--flag '.repeat(30)}`)).status).toBe(201);
    expect((await alp('q_short', 'reviewer wants to run npm run lint')).status).toBe(201);
    await open('reviewer asks for permission');
    expect(await page.locator('#scope').count()).toBe(0);
    await open('reviewer wants to run npm run lint');
    expect(await scopes()).toEqual(['', 'session', 'always']);
    expect(await page.locator('.scope-action').textContent()).toBe('Remembers the title reviewer wants to run npm run lint');
  });
});

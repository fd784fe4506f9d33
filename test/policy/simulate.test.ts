import { afterEach, describe, expect, it } from 'vitest';
import { createRequest, decide, expectError } from '../helpers/request-api.js';
import { createFakeClock } from '../helpers/fake-clock.js';
import { sessionGrantOnlyPermission } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** `POST /v1/rules/simulate`: a rule list replayed over real, ended requests. */

const DAY = 86_400_000;
const source = { agent: 'claude-code', repo: 'acme/api' };
const command = (shell: string) => ({ title: `Run ${shell}`, kind: 'command', source, previews: [{ type: 'command', command: { shell } }] });

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const READ_ONLY_GIT = { id: 'read-only-git', match: { command: '^git (status|diff|log)( |$)' }, action: 'approve' };
const NO_FORCE = { id: 'no-force-push', match: { command: 'git push .*--force' }, action: 'deny' };

/** Real history: decided by a person, cancelled by the agent, expired, decided by a rule. */
async function seed() {
  const approve = async (shell: string) => decide(t!.api, await createRequest(t!.api, command(shell)), 'approve');
  const deny = async (shell: string) => decide(t!.api, await createRequest(t!.api, command(shell)), 'deny');
  await approve('git status');
  await approve('git log -5');
  const denied = (await deny('git diff HEAD~1')).body;
  const cancelled = await createRequest(t!.api, command('git log --all'));
  await t!.api.post(`/v1/requests/${cancelled.id}/cancel`);
  const forced = (await approve('git push origin main --force')).body;
  await deny('git push origin dev --force');
  await approve('npm publish');
  await createRequest(t!.api, command('git status')); // still pending: not history
  return { denied, cancelled, forced };
}

describe('rule simulation', () => {
  it('reports what a candidate list would have done, per rule, and every disagreement with a person', async () => {
    t = await startTestServer();
    const { denied, cancelled, forced } = await seed();
    const res = await t.api.post('/v1/rules/simulate', { rules: [READ_ONLY_GIT, NO_FORCE] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      evaluated: 7,
      would: { approve: 4, deny: 2, dismiss: 0, ask: 0, no_match: 1 },
      per_rule: [
        { id: 'read-only-git', matched: 4, decided: 4, disagreed: 2 },
        { id: 'no-force-push', matched: 2, decided: 2, disagreed: 1 },
      ],
    });
    const byId = Object.fromEntries(res.body.disagreements.map((d: any) => [d.request_id, d]));
    expect(Object.keys(byId).sort()).toEqual([denied.id, cancelled.id, forced.id].sort());
    expect(byId[denied.id]).toEqual({
      request_id: denied.id,
      title: 'Run git diff HEAD~1',
      rule_id: 'read-only-git',
      would: 'approve',
      actual: 'denied',
      decided_by: 'admin',
    });
    expect(byId[cancelled.id]).toMatchObject({ rule_id: 'read-only-git', would: 'approve', actual: 'cancelled', decided_by: null });
    expect(byId[forced.id]).toMatchObject({ rule_id: 'no-force-push', would: 'deny', actual: 'approved', decided_by: 'admin' });
    // A dry run: nothing stored, nothing counted.
    expect(await t.count('rules')).toBe(0);
    expect(await t.count('rule_hits')).toBe(0);
  });

  it('replays the risk the agent sent, not the one an ask rule raised it to', async () => {
    t = await startTestServer({ rules: [{ id: 'deploys-are-high', match: { title: '^Deploy' }, action: 'ask', risk: 'high' }] as never });
    const raised = await createRequest(t.api, { title: 'Deploy the docs', risk: 'low', source });
    expect(raised.risk).toBe('high');
    expect((await decide(t.api, raised, 'deny')).status).toBe(200);
    const lowRisk = { id: 'low-risk', match: { agent: 'claude-code', risk: 'low' }, action: 'approve' };
    const res = await t.api.post('/v1/rules/simulate', { rules: [lowRisk] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.per_rule).toEqual([{ id: 'low-risk', matched: 1, decided: 1, disagreed: 1 }]);
    expect(res.body.disagreements).toEqual([expect.objectContaining({ request_id: raised.id, would: 'approve', actual: 'denied' })]);
    const high = await t.api.post('/v1/rules/simulate', { rules: [{ ...lowRisk, id: 'high-risk', match: { agent: 'claude-code', risk: 'high' } }] });
    expect(high.body.per_rule).toEqual([{ id: 'high-risk', matched: 0, decided: 0, disagreed: 0 }]);
  });

  it('defaults to the current rule list, and never counts what a rule decided as a disagreement', async () => {
    t = await startTestServer({ rules: [NO_FORCE] as never });
    await t.api.post('/v1/rules', READ_ONLY_GIT);
    const byRule = await createRequest(t.api, command('git push x --force')); // denied by the rule itself
    expect(byRule.decision.decided_by).toBe('rule');
    expect((await createRequest(t.api, command('git status'))).decision.rule_id).toBe('read-only-git');
    const res = await t.api.post('/v1/rules/simulate', {});
    expect(res.status, res.text).toBe(200);
    expect(res.body.per_rule.map((p: any) => p.id)).toEqual(['no-force-push', 'read-only-git']);
    expect(res.body.per_rule).toEqual([
      { id: 'no-force-push', matched: 1, decided: 1, disagreed: 0 },
      { id: 'read-only-git', matched: 1, decided: 1, disagreed: 0 },
    ]);
    expect(res.body.disagreements).toEqual([]);
  });

  it('takes a window (default the last 30 days) and a limit, newest first', async () => {
    const clock = createFakeClock(Date.UTC(2026, 0, 1));
    t = await startTestServer({}, { clock });
    const old = await createRequest(t.api, command('git status'));
    await decide(t.api, old, 'deny');
    clock.advance(40 * DAY);
    const recent = await createRequest(t.api, command('git status'));
    await decide(t.api, recent, 'deny');
    clock.advance(DAY);
    const newest = await createRequest(t.api, command('git status'));
    await decide(t.api, newest, 'deny');

    const dflt = (await t.api.post('/v1/rules/simulate', { rules: [READ_ONLY_GIT] })).body;
    expect(dflt.evaluated).toBe(2);
    expect(dflt.until - dflt.since).toBe(30 * DAY);
    const all = (await t.api.post('/v1/rules/simulate', { rules: [READ_ONLY_GIT], since: 0 })).body;
    expect(all.disagreements.map((d: any) => d.request_id)).toEqual([newest.id, recent.id, old.id]);
    const one = (await t.api.post('/v1/rules/simulate', { rules: [READ_ONLY_GIT], since: 0, limit: 1 })).body;
    expect(one.disagreements.map((d: any) => d.request_id)).toEqual([newest.id]);
    const window = (await t.api.post('/v1/rules/simulate', { rules: [READ_ONLY_GIT], since: 0, until: clock.now() - DAY })).body;
    expect(window.disagreements.map((d: any) => d.request_id)).toEqual([recent.id, old.id]);
    // Both ends are included: a window of one instant holds what ended at it.
    const at = clock.now();
    const instant = (await t.api.post('/v1/rules/simulate', { rules: [READ_ONLY_GIT], since: at, until: at })).body;
    expect(instant.disagreements.map((d: any) => d.request_id)).toEqual([newest.id]);
  });

  it('replays a native request without the options only a person may choose, as the live rule saw it', async () => {
    t = await startTestServer();
    // Its only way to approve is a grant for the whole session: no rule may take it.
    const frame = sessionGrantOnlyPermission('wide-1');
    const created = await t.api.post('/v1/formats/paperclip/requests', frame);
    expect(created.status, created.text).toBe(201);
    await decide(t.api, created.body.request, 'decline');
    const everything = { id: 'everything', match: { format: 'paperclip' }, action: 'approve' };
    const res = await t.api.post('/v1/rules/simulate', { rules: [everything] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      evaluated: 1,
      would: { approve: 0, ask: 1 },
      per_rule: [{ id: 'everything', matched: 1, decided: 0, disagreed: 0 }],
      disagreements: [],
    });
  });

  it.each([
    ['a bad rule', { rules: [{ id: 'x', match: { command: '[' }, action: 'approve' }] }, 'rules[0].match.command'],
    ['duplicate ids', { rules: [READ_ONLY_GIT, READ_ONLY_GIT] }, 'rules[1].id'],
    ['a limit over 100,000', { limit: 100_001 }, 'limit'],
    ['since after until', { since: 2000, until: 1000 }, 'since'],
    ['an unknown field', { window: '30d' }, 'window'],
  ])('refuses %s with 400 invalid_rule naming it', async (_name, body, key) => {
    t ??= await startTestServer();
    expectError(await t.api.post('/v1/rules/simulate', body), 400, 'invalid_rule', key);
  });
});

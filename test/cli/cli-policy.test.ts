import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { createRequest, decide } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** `countersign rules …` and `countersign auto …` as real processes against the real daemon. */
describe('countersign CLI: rules and auto mode', { timeout: 120_000 }, () => {
  let t: TestServer;
  let env: Record<string, string>;
  beforeEach(async () => {
    t = await startTestServer({
      rules: [{ id: 'no-force-push', match: { command: 'git push .*--force' }, action: 'deny', feedback: 'Not without a person.' }] as never,
    });
    env = { COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: t.adminToken };
  });
  afterEach(async () => t?.close());

  const gitStatus = { title: 'Check', kind: 'command', source: { agent: 'claude-code' }, previews: [{ type: 'command', command: { shell: 'git status' } }] };

  it('rules add, list, test, rm', async () => {
    const added = await runCli(
      ['rules', 'add', 'read-only-git', '--action', 'approve', '--agent', 'claude-code', '--kind', 'command,edit', '--command', '^git (status|diff)( |$)'],
      { env },
    );
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toBe('added read-only-git: approve when agent=claude-code kind=command,edit command=/^git (status|diff)( |$)/\n');
    const rules = (await t.api.get('/v1/rules')).body;
    expect(rules[1]).toMatchObject({
      id: 'read-only-git',
      match: { agent: 'claude-code', kind: ['command', 'edit'], command: '^git (status|diff)( |$)' },
      action: 'approve',
    });

    await createRequest(t.api, gitStatus);
    const list = await runCli(['rules', 'list'], { env });
    expect(list.code).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+SOURCE\s+ACTION\s+HITS\s+LAST HIT\s+MATCH$/);
    expect(lines[1]).toMatch(/^no-force-push\s+config\s+deny\s+0\s+-\s+command=/);
    expect(lines[2]).toMatch(/^read-only-git\s+stored\s+approve\s+1\s+\d{4}-/);

    const tested = await runCli(['rules', 'test', '--request', '-'], { env, input: JSON.stringify(gitStatus) });
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.stdout).toBe('read-only-git (stored): approve; would decide "approve"\n');
    const none = await runCli(['rules', 'test', '--request', '-', '--json'], { env, input: JSON.stringify({ title: 'Other' }) });
    expect(JSON.parse(none.stdout)).toEqual({ rule: null, action: 'no_match', would_decide: null });

    expect((await runCli(['rules', 'rm', 'read-only-git'], { env })).stdout).toBe('removed read-only-git\n');
    const inConfig = await runCli(['rules', 'rm', 'no-force-push'], { env });
    expect(inConfig.code).toBe(4);
    expect(inConfig.stderr).toMatch(/^countersign: rule_in_config: /);
  });

  it("rules add --rule takes YAML; a bad rule is the daemon's 400 naming the key, exit 4", async () => {
    const yaml = 'id: quiet\nmatch: {agent: my-hook, kind: info}\naction: dismiss\n';
    const ok = await runCli(['rules', 'add', '--rule', '-', '--expires', '12h', '--json'], { env, input: yaml });
    expect(ok.code, ok.stderr).toBe(0);
    const stored = JSON.parse(ok.stdout);
    expect(stored).toMatchObject({ id: 'quiet', action: 'dismiss', source: 'stored' });
    expect(stored.expires_at - stored.created_at).toBeGreaterThan(11 * 3_600_000);

    const bad = await runCli(['rules', 'add', 'bad', '--action', 'approve', '--command', '(oops'], { env });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toMatch(/^countersign: invalid_rule: match\.command: invalid regular expression/);
    const usage = await runCli(['rules', 'add', 'x'], { env });
    expect(usage.code).toBe(4);
    expect(usage.stderr).toMatch(/^countersign: usage: rules add: --action/);
  });

  it('rules simulate --add: the current list plus a candidate, over history, with disagreements', async () => {
    const denied = await createRequest(t.api, gitStatus);
    await decide(t.api, denied, 'deny');
    await decide(t.api, await createRequest(t.api, gitStatus), 'approve');
    const candidate = JSON.stringify({ id: 'read-only-git', match: { command: '^git status' }, action: 'approve' });
    const res = await runCli(['rules', 'simulate', '--add', '-', '--since', '1d'], { env, input: candidate });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^2 ended requests from .* would approve 2, deny 0, dismiss 0, ask 0; no rule matched 0\n/);
    expect(res.stdout).toMatch(/read-only-git\s+2\s+1\n/);
    expect(res.stdout).toContain(denied.id);
    const json = JSON.parse((await runCli(['rules', 'simulate', '--rules', '-', '--json'], { env, input: `[${candidate}]` })).stdout);
    expect(json.per_rule).toEqual([{ id: 'read-only-git', matched: 2, decided: 2, disagreed: 1 }]);
  });

  it('auto shows and sets auto mode', async () => {
    expect((await runCli(['auto'], { env })).stdout).toMatch(/^auto mode: off/);
    const set = await runCli(['auto', 'low', '--for', '1h', '--json'], { env });
    expect(set.code, set.stderr).toBe(0);
    const state = JSON.parse(set.stdout);
    expect(state).toMatchObject({ mode: 'low', set_by: 'admin' });
    expect(state.until - state.set_at).toBe(3_600_000);
    expect((await runCli(['auto'], { env })).stdout).toMatch(/^auto mode: low, approving new low and medium risk requests until \d{4}-/);
    expect((await runCli(['auto', 'off'], { env })).stdout).toMatch(/^auto mode: off/);
    const bad = await runCli(['auto', 'yolo'], { env });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toMatch(/^countersign: usage: auto: "yolo" is not a mode/);
  });
});

import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { decide } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectWs, type WsClient } from '../helpers/ws-client.js';

/**
 * `countersign hook claude-code` run as Claude Code runs a command hook (a child process, the hook
 * JSON on stdin), with the daemon up and down; and `countersign integrate claude-code`.
 */

const frame = (extra: Record<string, unknown> = {}) => ({
  session_id: 'sess-cli',
  transcript_path: '/home/dev/.claude/projects/x/sess-cli.jsonl',
  cwd: '/home/dev/src/web',
  permission_mode: 'default',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command: 'terraform apply', description: 'Apply the plan' },
  tool_use_id: 'toolu_cli_1',
  ...extra,
});
// A port nothing listens on (connection refused): one that was free a moment ago.
const DOWN = await new Promise<string>((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address() as AddressInfo;
    probe.close(() => resolve(`http://127.0.0.1:${port}`));
  });
});

describe('countersign hook claude-code', { timeout: 120_000 }, () => {
  let t: TestServer | undefined;
  const sockets: WsClient[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.socket.terminate();
    await t?.close();
    t = undefined;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  const hook = (env: Record<string, string>, input: string, args: string[] = []) => runCli(['hook', 'claude-code', ...args], { env, input });

  it('with the daemon up: sends the hook JSON with the local repo and branch, waits for the decision, prints the hook output, exits 0', async () => {
    t = await startTestServer();
    const agent = await t.submitClient('cli-laptop');
    const events = await connectWs(`${t.wsUrl}/v1/events`, t.adminToken);
    sockets.push(events);
    await expect.poll(() => t!.server.deps.hub.size()).toBeGreaterThan(0);
    const root = mkdtempSync(join(tmpdir(), 'countersign-hook-git-'));
    dirs.push(root);
    mkdirSync(join(root, '.git'));
    writeFileSync(join(root, '.git', 'HEAD'), 'ref: refs/heads/infra\n');
    writeFileSync(join(root, '.git', 'config'), '[remote "origin"]\n\turl = git@github.com:acme/infra.git\n');

    const running = hook({ COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: agent.token }, JSON.stringify(frame({ cwd: root })), ['--wait', '2m']);
    const created = await events.nextMatching((m) => m.type === 'request.created');
    expect(created.request.source).toMatchObject({ agent: 'claude-code', integration: 'cli-laptop', repo: 'acme/infra', branch: 'infra', cwd: root });
    expect((await decide(t.api, created.request, 'allow', { feedback: 'plan looks right' })).status).toBe(200);
    const r = await running;
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        permissionDecisionReason: 'Approved by admin in countersign: plan looks right',
      },
    });

    // A follow-up hook through the same command: nothing to decide, prints {}.
    const post = await hook(
      { COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: agent.token },
      JSON.stringify(frame({ hook_event_name: 'PostToolUse', tool_response: {} })),
    );
    expect([post.code, post.stdout.trim(), post.stderr]).toEqual([0, '{}', '']);
  });

  it('with the daemon down: answers per --on-error (ask by default, never allow unless told), exits 0', async () => {
    const env = { COUNTERSIGN_URL: DOWN, COUNTERSIGN_TOKEN: 'whatever' };
    const asked = await hook(env, JSON.stringify(frame()));
    expect(asked.code).toBe(0);
    expect(asked.stderr).toContain('unreachable');
    expect(JSON.parse(asked.stdout).hookSpecificOutput).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'ask' });

    const denied = await hook(env, JSON.stringify(frame()), ['--on-error', 'deny']);
    expect(denied.code).toBe(0);
    expect(JSON.parse(denied.stdout).hookSpecificOutput).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringContaining('unreachable'),
    });

    const dialog = await hook(env, JSON.stringify(frame({ hook_event_name: 'PermissionRequest', tool_use_id: undefined })));
    expect([dialog.code, dialog.stdout.trim()]).toEqual([0, '{}']);
    const dialogDenied = await hook(env, JSON.stringify(frame({ hook_event_name: 'PermissionRequest' })), ['--on-error', 'deny']);
    expect(JSON.parse(dialogDenied.stdout)).toMatchObject({ hookSpecificOutput: { decision: { behavior: 'deny' } } });

    const allowed = await hook(env, JSON.stringify(frame()), ['--on-error', 'allow']);
    expect(JSON.parse(allowed.stdout).hookSpecificOutput.permissionDecision).toBe('allow');

    // Input that names no event is answered as a tool call, per --on-error, never with {} (which
    // would leave the call to Claude Code's own rules).
    const garbage = await hook(env, 'not json');
    expect(garbage.code).toBe(0);
    expect(JSON.parse(garbage.stdout).hookSpecificOutput).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'ask' });
    expect(garbage.stderr).toContain('not a JSON object');
    const nameless = await hook(env, JSON.stringify({ session_id: 'x' }), ['--on-error', 'deny']);
    expect(JSON.parse(nameless.stdout).hookSpecificOutput).toMatchObject({
      permissionDecision: 'deny',
      permissionDecisionReason: expect.stringContaining('hook_event_name'),
    });

    // A mistyped command line is answered too, exit 0 (any other exit code and Claude Code goes
    // on without the hook): as --on-error says when that is readable, else ask.
    for (const [args, decision] of [
      [['--on-error', 'deny', '--wait', '5'], 'deny'],
      [['--on-error=deny', '--wait', '0s'], 'deny'],
      [['--on-error', 'deny', '--bogus'], 'deny'],
      [['--on-error', 'maybe'], 'ask'],
      [['--on-error', 'allow', '--on-wait', 'later'], 'allow'],
    ] as const) {
      const usage = await hook(env, JSON.stringify(frame()), [...args]);
      expect(usage.code, args.join(' ')).toBe(0);
      expect(JSON.parse(usage.stdout).hookSpecificOutput, args.join(' ')).toMatchObject({
        permissionDecision: decision,
        permissionDecisionReason: expect.stringContaining('hook:'),
      });
    }
  });

  it('with --on-error allow, a call the daemon refused is asked locally, never allowed: the agent can bring a refusal about', async () => {
    t = await startTestServer();
    const agent = await t.submitClient('laptop');
    const env = { COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: agent.token };
    const decisionOf = (r: { stdout: string }) => JSON.parse(r.stdout).hookSpecificOutput.permissionDecision;
    // A tool input the daemon refuses (400 invalid_frame): a __proto__ key.
    const malformed = await hook(env, JSON.stringify(frame()).replace('"description"', '"__proto__"'), ['--on-error', 'allow', '--wait', '1s']);
    expect(malformed.stderr).toContain('invalid_frame');
    expect(decisionOf(malformed)).toBe('ask');
    // A tool_use_id first sent for one command, then re-sent with another (409 native_conflict).
    expect(decisionOf(await hook(env, JSON.stringify(frame({ tool_use_id: 'toolu_same' })), ['--on-error', 'allow', '--wait', '1s']))).toBe('ask');
    const swapped = await hook(env, JSON.stringify(frame({ tool_use_id: 'toolu_same', tool_input: { command: 'rm -rf ~' } })), [
      '--on-error',
      'allow',
      '--wait',
      '1s',
    ]);
    expect(swapped.stderr).toContain('native_conflict');
    expect(decisionOf(swapped)).toBe('ask');
    const dialog = await hook(
      env,
      JSON.stringify(frame({ hook_event_name: 'PermissionRequest', tool_use_id: 'toolu_same', tool_input: { command: 'rm -rf ~' } })),
      ['--on-error', 'allow', '--wait', '1s'],
    );
    expect(JSON.parse(dialog.stdout)).toEqual({});
    // Input nested too deep to be sent as JSON, and a body the daemon cuts off mid-send: not an outage either.
    const deep = `${'['.repeat(5000)}"x"${']'.repeat(5000)}`;
    const nested = JSON.stringify(frame({ tool_use_id: 'toolu_deep' })).replace('"Apply the plan"', deep);
    expect(decisionOf(await hook(env, nested, ['--on-error', 'allow', '--wait', '1s']))).toBe('ask');
    // Nor a token refused: it may have come from a file the agent wrote (data/admin-token in its cwd).
    expect((await t.api.delete('/v1/tokens/laptop')).status).toBe(200);
    expect(decisionOf(await hook(env, JSON.stringify(frame()), ['--on-error', 'allow']))).toBe('ask');
  });

  it('with --on-error allow, a body too large for the daemon is asked locally, whether the 413 arrives or the connection is cut', async () => {
    t = await startTestServer({ requests: { max_body_bytes: 16_384 } } as never);
    const env = { COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: t.adminToken };
    for (const size of [20_000, 3_000_000]) {
      const r = await hook(env, JSON.stringify(frame({ tool_input: { command: `echo ${'a'.repeat(size)}` } })), ['--on-error', 'allow', '--wait', '1s']);
      expect(JSON.parse(r.stdout).hookSpecificOutput.permissionDecision, String(size)).toBe('ask');
    }
    expect(await t.count('requests')).toBe(0);
  });

  it('a refused call (revoked token, malformed hook) falls back too, naming the reason; nothing is stored', async () => {
    t = await startTestServer();
    const revoked = await t.submitClient('old');
    expect((await t.api.delete('/v1/tokens/old')).status).toBe(200);
    const r = await hook({ COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: revoked.token }, JSON.stringify(frame()));
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('unauthorized');
    expect(JSON.parse(r.stdout).hookSpecificOutput.permissionDecision).toBe('ask');
    const bad = await hook({ COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: t.adminToken }, JSON.stringify(frame({ tool_input: 'rm -rf /' })));
    expect(bad.stderr).toContain('invalid_frame');
    expect(JSON.parse(bad.stdout).hookSpecificOutput.permissionDecision).toBe('ask');
    expect(await t.count('requests')).toBe(0);
  });
});

describe('countersign integrate claude-code', { timeout: 120_000 }, () => {
  let t: TestServer | undefined;
  const dirs: string[] = [];
  afterEach(async () => {
    await t?.close();
    t = undefined;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('prints the HTTP hooks block (token from the environment, never in the file) or the command form', async () => {
    const http = await runCli(['integrate', 'claude-code', '--url', 'http://127.0.0.1:7470'], { env: {} });
    expect(http.code, http.stderr).toBe(0);
    const block = JSON.parse(http.stdout);
    expect(block.hooks.PreToolUse).toEqual([
      {
        matcher: 'Bash|Edit|Write',
        hooks: [
          {
            type: 'http',
            url: 'http://127.0.0.1:7470/v1/formats/claude-code/hook?wait=55s',
            timeout: 65,
            headers: { Authorization: 'Bearer $COUNTERSIGN_TOKEN' },
            allowedEnvVars: ['COUNTERSIGN_TOKEN'],
          },
        ],
      },
    ]);
    expect(Object.keys(block.hooks).sort()).toEqual(['PostToolUse', 'PostToolUseFailure', 'PreToolUse', 'SessionEnd']);
    expect(block.hooks.SessionEnd[0].hooks[0].url).toBe('http://127.0.0.1:7470/v1/formats/claude-code/hook');

    const command = await runCli(
      ['integrate', 'claude-code', '--command', '--matcher', 'Bash', '--event', 'permission-request', '--wait', '2m', '--no-follow-ups'],
      { env: {} },
    );
    expect(command.code, command.stderr).toBe(0);
    expect(JSON.parse(command.stdout)).toEqual({
      hooks: { PermissionRequest: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'countersign hook claude-code --wait 120s', timeout: 130 }] }] },
    });

    for (const args of [
      ['--http', '--command'],
      ['--event', 'stop'],
      ['--wait', '11m'],
      ['--matcher', ' '],
    ]) {
      const bad = await runCli(['integrate', 'claude-code', ...args], { env: {} });
      expect(bad.code, args.join(' ')).toBe(4);
      expect(bad.stderr).toContain('usage');
    }
  });

  it('--write merges into an existing settings file keeping everything else, and a re-run replaces its own hooks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'countersign-integrate-'));
    dirs.push(dir);
    const file = join(dir, '.claude', 'settings.json');
    mkdirSync(join(dir, '.claude'));
    const theirs = { type: 'command', command: 'npm run lint' };
    writeFileSync(
      file,
      JSON.stringify({ model: 'opus', permissions: { allow: ['Bash(git status)'] }, hooks: { PostToolUse: [{ matcher: 'Edit', hooks: [theirs] }] } }),
    );

    const first = await runCli(['integrate', 'claude-code', '--write', '.claude/settings.json'], { env: {}, cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    const again = await runCli(['integrate', 'claude-code', '--command', '--write', '.claude/settings.json'], { env: {}, cwd: dir });
    expect(again.code, again.stderr).toBe(0);
    const settings = JSON.parse(readFileSync(file, 'utf8'));
    expect(settings.model).toBe('opus');
    expect(settings.permissions).toEqual({ allow: ['Bash(git status)'] });
    expect(settings.hooks.PostToolUse).toEqual([
      { matcher: 'Edit', hooks: [theirs] },
      { matcher: 'Bash|Edit|Write', hooks: [{ type: 'command', command: 'countersign hook claude-code', timeout: 30 }] },
    ]);
    expect(settings.hooks.PreToolUse).toEqual([
      { matcher: 'Bash|Edit|Write', hooks: [{ type: 'command', command: 'countersign hook claude-code --wait 55s', timeout: 65 }] },
    ]);

    // A broken settings file is left alone.
    writeFileSync(file, '{"model": ');
    const broken = await runCli(['integrate', 'claude-code', '--write', file], { env: {} });
    expect(broken.code).toBe(4);
    expect(broken.stderr).toContain('not valid JSON');
    expect(readFileSync(file, 'utf8')).toBe('{"model": ');
  });

  it('--write through a symlinked settings file updates the file it points to and keeps the link', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'countersign-integrate-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'dotfiles'));
    mkdirSync(join(dir, 'home', '.claude'), { recursive: true });
    writeFileSync(join(dir, 'dotfiles', 'settings.json'), '{"model": "opus"}');
    const link = join(dir, 'home', '.claude', 'settings.json');
    symlinkSync(join('..', '..', 'dotfiles', 'settings.json'), link);
    const r = await runCli(['integrate', 'claude-code', '--write', link], { env: {} });
    expect(r.code, r.stderr).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    const settings = JSON.parse(readFileSync(join(dir, 'dotfiles', 'settings.json'), 'utf8'));
    expect(settings.model).toBe('opus');
    expect(settings.hooks.PreToolUse).toHaveLength(1);
    expect(readdirSync(join(dir, 'dotfiles'))).toEqual(['settings.json']);
  });

  it('--write keeps the permissions of the settings file it rewrites', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'countersign-integrate-'));
    dirs.push(dir);
    const file = join(dir, 'settings.json');
    for (const mode of [0o600, 0o640]) {
      writeFileSync(file, '{"env": {"ANTHROPIC_API_KEY": "sk-not-for-others"}}');
      chmodSync(file, mode);
      const r = await runCli(['integrate', 'claude-code', '--write', file], { env: {} });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(readFileSync(file, 'utf8')).hooks.PreToolUse).toHaveLength(1);
      expect(statSync(file).mode & 0o777).toBe(mode);
    }
  });

  it('--token-name with a settings file it cannot merge into creates no token, so a re-run with the same name works', async () => {
    t = await startTestServer();
    const dir = mkdtempSync(join(tmpdir(), 'countersign-integrate-'));
    dirs.push(dir);
    const file = join(dir, 'settings.json');
    const env = { COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: t.adminToken };
    for (const broken of [
      '{"model": ',
      '{"hooks": []}',
      '{"hooks": {"PreToolUse": {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}}}',
    ]) {
      writeFileSync(file, broken);
      const r = await runCli(['integrate', 'claude-code', '--token-name', 'claude-laptop', '--write', file], { env });
      expect(r.code).toBe(4);
      expect(r.stderr).toContain('bad_settings');
      expect(r.stderr).not.toContain('export COUNTERSIGN_TOKEN');
      expect(readFileSync(file, 'utf8')).toBe(broken);
      expect((await t.api.get('/v1/tokens')).body).toEqual([]);
    }
    writeFileSync(file, '{}');
    const fixed = await runCli(['integrate', 'claude-code', '--token-name', 'claude-laptop', '--write', file], { env });
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(fixed.stderr).toContain('export COUNTERSIGN_TOKEN=cst_');
    expect(JSON.parse(readFileSync(file, 'utf8')).hooks.PreToolUse).toHaveLength(1);
  });

  it('--token-name creates a submit token with the admin token and prints it once on stderr; the hook works with it', async () => {
    t = await startTestServer();
    const r = await runCli(['integrate', 'claude-code', '--token-name', 'claude-laptop'], { env: { COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: t.adminToken } });
    expect(r.code, r.stderr).toBe(0);
    const token = /export COUNTERSIGN_TOKEN=(\S+)/.exec(r.stderr)?.[1];
    expect(token).toBeDefined();
    expect(r.stdout).not.toContain(token!);
    expect(JSON.parse(r.stdout).hooks.PreToolUse[0].hooks[0].url).toBe(`${t.url}/v1/formats/claude-code/hook?wait=55s`);
    const res = await fetch(`${t.url}/v1/formats/claude-code/hook?wait=1ms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(frame()),
    });
    expect(res.status).toBe(200);
    const [row] = (await t.api.get('/v1/requests')).body;
    expect(row.source.integration).toBe('claude-laptop');
  });
});

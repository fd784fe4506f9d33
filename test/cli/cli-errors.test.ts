import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** A port nothing listens on: bound by us, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('countersign CLI: errors, usage and settings', { timeout: 120_000 }, () => {
  let t: TestServer | undefined;
  const dirs: string[] = [];
  afterEach(async () => {
    await t?.close();
    t = undefined;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('an unreachable daemon exits 4 with one line naming "unreachable"', async () => {
    const port = await closedPort();
    for (const args of [['ls'], ['show', 'x'], ['ask', '--title', 'x', '--wait']]) {
      const r = await runCli(args, { env: { COUNTERSIGN_URL: `http://127.0.0.1:${port}`, COUNTERSIGN_TOKEN: 'whatever-token' } });
      expect(r.code).toBe(4);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(new RegExp(`^countersign: unreachable: cannot reach the daemon at http://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*\\n$`));
    }
  });

  it('usage errors exit 4; help exits 0', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['frobnicate'], /^countersign: usage: unknown command "frobnicate"/],
      [['toString'], /^countersign: usage: unknown command "toString"/],
      [['ls', '--bogus'], /^countersign: usage: ls: Unknown option '--bogus'/],
      [['approve'], /^countersign: usage: approve: missing ID/],
      [['show', 'a', 'b'], /^countersign: usage: show: unexpected argument "b"/],
      [['ask', '--summary', 'no title'], /^countersign: usage: ask: --title is required/],
      [['ask', '--title', 't', '--option', 'justanid'], /^countersign: usage: --option: "justanid" must look like id:label/],
      [['answer', 'X', '--select', 'nolabel'], /^countersign: usage: --select: "nolabel" must look like QUESTION_ID=LABEL/],
      [['tokens', 'mint'], /^countersign: usage: tokens: unknown subcommand "mint"/],
      [['ls', '--url', 'ftp://example.test'], /^countersign: usage: --url: "ftp:\/\/example.test" must be an http/],
      [['serve', '--port', '1'], /^countersign: usage: serve: Unknown option '--port'/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args, { env: { COUNTERSIGN_URL: 'http://127.0.0.1:9', COUNTERSIGN_TOKEN: 'whatever-token' } });
      expect(r.code, args.join(' ')).toBe(4);
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
    const none = await runCli([]);
    expect(none.code).toBe(4);
    expect(none.stderr).toContain('usage: countersign <command>');
    for (const args of [['help'], ['--help'], ['ask', '--help']]) {
      const r = await runCli(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('exit codes');
    }
  });

  it('HTTP errors exit 4 naming the code: 401, 404, 429', async () => {
    t = await startTestServer({ requests: { max_per_minute: 1 } });
    const env = { COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: t.adminToken };

    const bad = await runCli(['ls'], { env: { ...env, COUNTERSIGN_TOKEN: 'not-the-token-at-all' } });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toMatch(/^countersign: unauthorized: .*\(HTTP 401 from GET \/v1\/requests\)\n$/);

    const missing = await runCli(['show', '01ARZ3NDEKTSV4RRFFQ69G5FAV'], { env });
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/^countersign: not_found: /);

    const { token } = await t.submitClient('agent-one');
    const first = await runCli(['ask', '--title', 'one'], { env: { ...env, COUNTERSIGN_TOKEN: token } });
    expect(first.code).toBe(0);
    const second = await runCli(['ask', '--title', 'two'], { env: { ...env, COUNTERSIGN_TOKEN: token } });
    expect(second.code).toBe(4);
    expect(second.stderr).toMatch(/^countersign: rate_limited: .*\(HTTP 429/);
    expect((await t.api.get('/v1/requests')).body.map((r: any) => r.title)).toEqual(['one']);
  });

  it('finds the token: --token over COUNTERSIGN_TOKEN over COUNTERSIGN_ADMIN_TOKEN over <data dir>/admin-token', async () => {
    t = await startTestServer();
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-cli-'));
    dirs.push(dataDir);
    writeFileSync(join(dataDir, 'admin-token'), `${t.adminToken}\n`, { mode: 0o600 });
    const url = { COUNTERSIGN_URL: t.url };

    expect((await runCli(['ls'], { env: { ...url, COUNTERSIGN_DATA_DIR: dataDir } })).code).toBe(0);
    // ./data relative to where the CLI runs, like the daemon's default.
    const cwd = mkdtempSync(join(tmpdir(), 'countersign-cwd-'));
    dirs.push(cwd);
    const dataSub = join(cwd, 'data');
    mkdirSync(dataSub);
    writeFileSync(join(dataSub, 'admin-token'), t.adminToken);
    expect((await runCli(['ls'], { env: url, cwd })).code).toBe(0);

    expect((await runCli(['ls'], { env: { ...url, COUNTERSIGN_ADMIN_TOKEN: t.adminToken, COUNTERSIGN_DATA_DIR: '/nonexistent' } })).code).toBe(0);
    const wrongEnv = await runCli(['ls'], { env: { ...url, COUNTERSIGN_TOKEN: 'wrong-token-value', COUNTERSIGN_ADMIN_TOKEN: t.adminToken } });
    expect(wrongEnv.stderr).toMatch(/^countersign: unauthorized/);
    expect((await runCli(['ls', '--token', t.adminToken], { env: { ...url, COUNTERSIGN_TOKEN: 'wrong-token-value' } })).code).toBe(0);
    expect((await runCli(['--url', t.url, '--token', t.adminToken, 'ls'])).code).toBe(0);

    const none = await runCli(['ls'], { env: { ...url, COUNTERSIGN_DATA_DIR: join(dataDir, 'missing') } });
    expect(none.code).toBe(4);
    expect(none.stderr).toMatch(/^countersign: no_token: no token: pass --token or set COUNTERSIGN_TOKEN \(could not read .*admin-token: it does not exist\)/);
  });
});

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { COMMAND_HELP } from '../../src/cli/usage.js';
import { inProcessCli } from '../helpers/cli-harness.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** A port nothing listens on: bound by us, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('countersign CLI: errors, usage and settings', { timeout: 60_000 }, () => {
  let t: TestServer | undefined;
  const dirs: string[] = [];
  afterEach(async () => {
    await t?.close();
    t = undefined;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('an unreachable daemon exits 4 with one line naming "unreachable"', async () => {
    const port = await closedPort();
    const cli = inProcessCli({ env: { COUNTERSIGN_URL: `http://127.0.0.1:${port}`, COUNTERSIGN_TOKEN: 'whatever-token' } });
    for (const args of [['ls'], ['show', 'x'], ['wait', 'x'], ['ask', '--title', 'x', '--wait']]) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(4);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(new RegExp(`^countersign: unreachable: cannot reach the daemon at http://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*\\n$`));
    }
  });

  it('usage errors exit 4 with a friendly message and a pointer to the command help', async () => {
    const cli = inProcessCli({ env: { COUNTERSIGN_URL: 'http://127.0.0.1:9', COUNTERSIGN_TOKEN: 'whatever-token' } });
    const cases: Array<[string[], string | RegExp]> = [
      [['frobnicate'], 'countersign: usage: unknown command "frobnicate"; see countersign help\n'],
      [['aks', '--title', 'x'], 'countersign: usage: unknown command "aks" (did you mean ask?); see countersign help\n'],
      [['toString'], /^countersign: usage: unknown command "toString"/],
      [['ls', '--bogus'], 'countersign: usage: ls: unknown option --bogus (see countersign ls --help)\n'],
      [['ls', '--stauts', 'pending'], 'countersign: usage: ls: unknown option --stauts (did you mean --status?) (see countersign ls --help)\n'],
      [['list', '--agnet', 'a'], 'countersign: usage: ls: unknown option --agnet (did you mean --agent?) (see countersign ls --help)\n'],
      [['ask', '--titel', 'x'], /^countersign: usage: ask: unknown option --titel \(did you mean --title\?\)/],
      [['ask', '--title'], 'countersign: usage: ask: --title needs a value (see countersign ask --help)\n'],
      [['ask', '--title', 't', '--wait=yes'], /^countersign: usage: ask: --wait takes no value/],
      [['deny', 'X', '-m'], /^countersign: usage: deny: --message \(-m\) needs a value/],
      [['approve'], /^countersign: usage: approve: missing ID \(see countersign approve --help\)/],
      [['show', 'a', 'b'], /^countersign: usage: show: unexpected argument "b"/],
      [['ask', '--summary', 'no title'], /^countersign: usage: ask: --title is required/],
      [['ask', '--title', 't', '--option', 'justanid'], /^countersign: usage: --option: "justanid" must look like id:label/],
      [['answer', 'X', '--select', 'nolabel'], /^countersign: usage: --select: "nolabel" must look like QUESTION_ID=LABEL/],
      [['tokens', 'mint'], /^countersign: usage: tokens: unknown subcommand "mint"/],
      [['tokens', 'create', 'x', '--grnat', 'resolve_upstream'], /^countersign: usage: tokens create: unknown option --grnat \(did you mean --grant\?\)/],
      [['ls', '--url', 'ftp://example.test'], /^countersign: usage: --url: "ftp:\/\/example.test" must be an http/],
      [['serve', '--port', '1'], /^countersign: usage: serve: unknown option --port \(see countersign serve --help\)/],
      [['serve', 'now'], /^countersign: usage: serve: unexpected argument "now"/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(4);
      expect(r.stdout, args.join(' ')).toBe('');
      if (typeof message === 'string') expect(r.stderr, args.join(' ')).toBe(message);
      else expect(r.stderr, args.join(' ')).toMatch(message);
    }
    const none = await cli([]);
    expect(none.code).toBe(4);
    expect(none.stderr).toContain('usage: countersign <command>');
  });

  it('help: the overview, and each command its own (--help, -h, help CMD); list is ls', async () => {
    const cli = inProcessCli();
    for (const args of [['help'], ['--help'], ['-h']]) {
      const r = await cli(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('usage: countersign <command>');
      expect(r.stdout).toContain('exit codes');
    }
    for (const command of Object.keys(COMMAND_HELP)) {
      for (const args of [
        [command, '--help'],
        [command, '-h'],
        ['help', command],
      ]) {
        const r = await cli(args);
        expect(r.code, args.join(' ')).toBe(0);
        expect(r.stdout, args.join(' ')).toBe(COMMAND_HELP[command]);
        expect(r.stdout).toMatch(new RegExp(`^usage: countersign ${command}\\b`));
      }
    }
    // Help wins over everything else on the line, even a missing required flag.
    expect((await cli(['ask', '--help', '--bogus'])).stdout).toBe(COMMAND_HELP.ask);
    expect((await cli(['list', '--help'])).stdout).toBe(COMMAND_HELP.ls);
    expect((await cli(['help', 'list'])).stdout).toBe(COMMAND_HELP.ls);
    const unknown = await cli(['help', 'frobnicate']);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toMatch(/^countersign: usage: unknown command "frobnicate"/);
  });

  it('usage matches the rules: deny -m is optional, tokens create takes --grant', () => {
    expect(COMMAND_HELP.deny).toMatch(/^usage: countersign deny ID \[--option X\] \[-m FEEDBACK\]$/m);
    expect(COMMAND_HELP.tokens).toContain('[--grant G]...');
  });

  it('--version prints the package version', async () => {
    const { VERSION } = await import('../../src/lib/version.js');
    for (const flag of ['--version', '-V', 'version']) {
      const r = await inProcessCli()([flag]);
      expect(r).toEqual({ code: 0, stdout: `countersign ${VERSION}\n`, stderr: '' });
    }
  });

  it('HTTP errors exit 4 naming the code: 401, 404, 429', async () => {
    t = await startTestServer({ requests: { max_per_minute: 1 } });
    const env = { COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: t.adminToken };

    const bad = await inProcessCli({ env: { ...env, COUNTERSIGN_TOKEN: 'not-the-token-at-all' } })(['ls']);
    expect(bad.code).toBe(4);
    expect(bad.stderr).toMatch(/^countersign: unauthorized: .*\(HTTP 401 from GET \/v1\/requests\)\n$/);

    const missing = await inProcessCli({ env })(['show', '01ARZ3NDEKTSV4RRFFQ69G5FAV']);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/^countersign: not_found: /);

    const { token } = await t.submitClient('agent-one');
    const asAgent = inProcessCli({ env: { ...env, COUNTERSIGN_TOKEN: token } });
    const first = await asAgent(['ask', '--title', 'one']);
    expect(first.code).toBe(0);
    const second = await asAgent(['ask', '--title', 'two']);
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

    expect((await inProcessCli({ env: { ...url, COUNTERSIGN_DATA_DIR: dataDir } })(['ls'])).code).toBe(0);
    // ./data relative to where the CLI runs, like the daemon's default.
    const cwd = mkdtempSync(join(tmpdir(), 'countersign-cwd-'));
    dirs.push(cwd);
    const dataSub = join(cwd, 'data');
    mkdirSync(dataSub);
    writeFileSync(join(dataSub, 'admin-token'), t.adminToken);
    expect((await inProcessCli({ env: url, cwd })(['ls'])).code).toBe(0);

    expect((await inProcessCli({ env: { ...url, COUNTERSIGN_ADMIN_TOKEN: t.adminToken, COUNTERSIGN_DATA_DIR: '/nonexistent' } })(['ls'])).code).toBe(0);
    const wrongEnv = await inProcessCli({ env: { ...url, COUNTERSIGN_TOKEN: 'wrong-token-value', COUNTERSIGN_ADMIN_TOKEN: t.adminToken } })(['ls']);
    expect(wrongEnv.stderr).toMatch(/^countersign: unauthorized/);
    expect((await inProcessCli({ env: { ...url, COUNTERSIGN_TOKEN: 'wrong-token-value' } })(['ls', '--token', t.adminToken])).code).toBe(0);
    expect((await inProcessCli({ cwd })(['--url', t.url, '--token', t.adminToken, 'ls'])).code).toBe(0);

    // The admin-token file goes only to a daemon on this machine: a URL elsewhere gets nothing.
    const dialled: string[] = [];
    const spy: typeof fetch = async (input, init) => {
      dialled.push(`${String(input)} ${JSON.stringify(init?.headers ?? {})}`);
      return fetch(input, init);
    };
    const elsewhere = await inProcessCli({ cwd, fetch: spy })(['--url', 'https://approvals.example.com', 'ls']);
    expect(elsewhere.code).toBe(4);
    expect(elsewhere.stderr).toBe(
      `countersign: no_token: no token for approvals.example.com: pass --token or set COUNTERSIGN_TOKEN (${join(dataSub, 'admin-token')}, if any, is sent only to a daemon on this machine)\n`,
    );
    expect(dialled).toEqual([]);
    // Any name of this machine still finds it.
    expect((await inProcessCli({ cwd, fetch: spy })(['--url', t.url.replace('127.0.0.1', 'localhost'), 'ls'])).code).toBe(0);
    expect(dialled).toHaveLength(1);

    // Without a URL, the daemon's own COUNTERSIGN_PORT names where it listens on this machine.
    const port = new URL(t.url).port;
    const byPort = await inProcessCli({ cwd, fetch: spy, env: { COUNTERSIGN_PORT: port } })(['ls']);
    expect(byPort.code, byPort.stderr).toBe(0);
    expect(dialled.at(-1)).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/v1/requests`));
    for (const bad of ['0', 'http', '70000']) {
      const refused = await inProcessCli({ cwd, env: { COUNTERSIGN_PORT: bad } })(['ls']);
      expect(refused.code).toBe(4);
      expect(refused.stderr).toContain(`COUNTERSIGN_PORT: "${bad}" is not a port`);
    }

    const none = await inProcessCli({ env: { ...url, COUNTERSIGN_DATA_DIR: join(dataDir, 'missing') } })(['ls']);
    expect(none.code).toBe(4);
    expect(none.stderr).toMatch(/^countersign: no_token: no token: pass --token or set COUNTERSIGN_TOKEN \(could not read .*admin-token: it does not exist\)/);
  });
});

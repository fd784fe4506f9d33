import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The CLI as a real process, only for what the process boundary shows: the exit code the
 * shell sees, stdin piped in, and which modules a command loads. Everything else about the
 * client commands is tested in-process.
 */
describe('countersign CLI as a process', { timeout: 60_000 }, () => {
  let t: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await startTestServer();
    env = { COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: t.adminToken };
  });
  afterAll(async () => t?.close());

  it('the process exits 0 approved, 1 denied, 2 expired, 3 cancelled, 4 error', async () => {
    const make = async (body: Record<string, unknown>) => (await t.api.post('/v1/requests', { title: 'exit code', ...body })).body;
    const approved = await make({});
    await t.api.post(`/v1/requests/${approved.id}/decision`, { option: 'approve', content_hash: approved.content_hash });
    const denied = await make({});
    await t.api.post(`/v1/requests/${denied.id}/decision`, { option: 'deny', content_hash: denied.content_hash });
    const cancelled = await make({});
    await t.api.post(`/v1/requests/${cancelled.id}/cancel`);
    const expiring = await make({ timeout: '1ms', on_timeout: 'expire' });
    // The long-poll answers once the daemon has expired it.
    expect((await t.api.get(`/v1/requests/${expiring.id}/wait?timeout=60s`)).body.status).toBe('expired');

    const cases: Array<[string[], number]> = [
      [['show', approved.id], 0],
      [['show', denied.id], 1],
      [['wait', expiring.id], 2],
      [['show', cancelled.id], 3],
      [['show', '01ARZ3NDEKTSV4RRFFQ69G5FAV'], 4],
      [['frobnicate'], 4],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args, { env })));
    expect(results.map((r) => r.code)).toEqual(cases.map(([, code]) => code));
    expect(results.map((r) => r.signal)).toEqual(cases.map(() => null));
  });

  it('reads a whole request from piped stdin (ask --request -)', async () => {
    const r = await runCli(['ask', '--request', '-', '--json'], { env, input: JSON.stringify({ title: 'From a pipe', kind: 'review' }) });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const created = JSON.parse(r.stdout);
    expect(created).toMatchObject({ title: 'From a pipe', kind: 'review', status: 'pending' });
    expect((await t.api.get(`/v1/requests/${created.id}`)).body.title).toBe('From a pipe');
  });

  describe('loads only what the command needs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'countersign-trace-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    let n = 0;

    async function modulesLoadedBy(args: string[], extraEnv: Record<string, string> = {}, exitCode = 0) {
      const traceFile = join(dir, `trace-${n++}.txt`);
      const r = await runCli(args, {
        env: { ...env, ...extraEnv, MODULE_TRACE_FILE: traceFile },
        nodeArgs: ['--import', join(import.meta.dirname, '..', 'helpers', 'module-trace.mjs')],
      });
      expect(r.code, r.stderr).toBe(exitCode);
      return readFileSync(traceFile, 'utf8').trim().split('\n');
    }
    // The daemon's heavy parts: the HTTP server, SQLite, the config schema and its parsers.
    const SERVER_ONLY = [/\/node_modules\/(fastify|better-sqlite3|@fastify|pino|zod|yaml|ws|undici)\//, /\/dist\/(server|app|config)\.js$/];

    it.each([[['--help']], [['serve', '--help']], [['ls']]])('countersign %j loads none of the daemon', async (args) => {
      const loaded = await modulesLoadedBy(args);
      expect(loaded.some((u) => u.endsWith('/dist/cli/run-cli.js'))).toBe(true);
      for (const pattern of SERVER_ONLY)
        expect(
          loaded.filter((u) => pattern.test(u)),
          String(pattern),
        ).toEqual([]);
    });

    it('serve does load it (the trace sees those modules when they are loaded)', async () => {
      // A misspelt variable stops serve right after loading, before it listens.
      const loaded = await modulesLoadedBy(['serve'], { COUNTERSIGN_PROT: '1' }, 4);
      for (const pattern of SERVER_ONLY) expect(loaded.filter((u) => pattern.test(u)).length, String(pattern)).toBeGreaterThan(0);
    });
  });
});

describe('countersign CLI without a daemon', () => {
  it('--help and --version exit 0 on their own', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: countersign <command>');
    const version = await runCli(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^countersign \d+\.\d+\.\d+/);
  });
});

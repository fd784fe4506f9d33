import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureWritableDataDir } from '../../src/data-dir.js';
import { ConfigError } from '../../src/config.js';
import { CLI_PATH, runCli } from '../helpers/cli-process.js';
import { spawnDaemon } from '../helpers/daemon-process.js';
import { createApiClient } from '../helpers/test-server.js';

const ADMIN = 'serve-test-admin-token-0123456789';

/**
 * The unwritable-data-directory case runs the binary as `nobody`, so it needs root, and a
 * checkout `nobody` can read (a clone inside a 0700 directory is not): otherwise it is skipped.
 */
function nobodyWhoCanRunTheCli(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'nobody'], { encoding: 'utf8' }).trim());
  const nobody = { uid: id('-u'), gid: id('-g') };
  if (spawnSync(process.execPath, [CLI_PATH, '--version'], { ...nobody, stdio: 'ignore' }).status === 0) return nobody;
  console.warn('serve.test.ts: the unwritable data directory case is SKIPPED: user nobody cannot read this checkout');
  return null;
}
const NOBODY = nobodyWhoCanRunTheCli();

/** `countersign serve` as a real process: what stops it at start (exit 4) and what it warns about. */
describe('countersign serve: start-up errors and warnings', { timeout: 60_000 }, () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'countersign-serve-'));
    dirs.push(d);
    return d;
  };
  afterEach(async () => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  const baseEnv = () => ({ COUNTERSIGN_PORT: '0', COUNTERSIGN_DATA_DIR: tempDir(), COUNTERSIGN_ADMIN_TOKEN: ADMIN, COUNTERSIGN_LOG_LEVEL: 'warn' });

  it('a misspelt COUNTERSIGN_* variable stops it with exit 4, naming the variable it meant', async () => {
    const r = await runCli(['serve'], { env: { ...baseEnv(), COUNTERSIGN_REQUESTS_DEFAULT_TIMEOT: '10m' } });
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'countersign: invalid configuration:\n  COUNTERSIGN_REQUESTS_DEFAULT_TIMEOT: unknown environment variable (did you mean COUNTERSIGN_REQUESTS_DEFAULT_TIMEOUT?)\n',
    );
  });

  it('a bad value stops it with exit 4, quoting what was written', async () => {
    const r = await runCli(['serve'], { env: { ...baseEnv(), COUNTERSIGN_PORT: 'eighty' } });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^countersign: invalid configuration:\n {2}port: .*\(got "eighty" from COUNTERSIGN_PORT\)\n$/);
  });

  it('a PostgreSQL it cannot reach: exit 4 naming where and why, never the password', async () => {
    // A port nothing listens on: taken from a server that is then closed.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const r = await runCli(['serve'], { env: { ...baseEnv(), COUNTERSIGN_STORAGE_URL: `postgres://cs:hunter2-secret@127.0.0.1:${port}/approvals` } });
    expect(r.code).toBe(4);
    expect(r.stderr).toBe(`countersign: cannot start: cannot reach PostgreSQL at 127.0.0.1:${port}/approvals: connect ECONNREFUSED 127.0.0.1:${port}\n`);
    expect(r.stdout + r.stderr).not.toContain('hunter2');
  });

  it.skipIf(!NOBODY)('a data directory the user cannot write: exit 4 naming the path, the user id and the fix', async () => {
    // The Docker bind-mount case: the directory belongs to another user than the daemon's.
    const root = tempDir();
    chmodSync(root, 0o755);
    const dataDir = join(root, 'data');
    mkdirSync(dataDir, { mode: 0o755 });
    const { uid, gid } = NOBODY!;
    const child = await runCli(['serve'], {
      env: { ...baseEnv(), COUNTERSIGN_DATA_DIR: dataDir },
      cwd: root,
      asUser: { uid, gid },
    });
    expect(child.code).toBe(4);
    expect(child.stderr).toContain(`countersign: the data directory ${dataDir} is not writable by uid ${uid} (gid ${gid}): EACCES`);
    expect(child.stderr).toContain(`fix: give it to uid ${uid} (chown -R ${uid}:${gid} ${dataDir})`);
    expect(child.stderr).toContain(`sudo chown -R ${uid}:${gid} /host/dir`);
  });

  it('ensureWritableDataDir: a path that cannot become a directory is a ConfigError naming it', () => {
    const root = tempDir();
    const file = join(root, 'a-file');
    writeFileSync(file, '');
    const target = join(file, 'data');
    expect(() => ensureWritableDataDir(target)).toThrow(ConfigError);
    expect(() => ensureWritableDataDir(target)).toThrow(`the data directory ${target} is not writable by uid ${process.getuid?.()}`);
    // And a good one is created, 0700, and left without a trace of the check.
    const good = join(root, 'fresh', 'data');
    ensureWritableDataDir(good);
    expect(execFileSync('ls', ['-A', good], { encoding: 'utf8' })).toBe('');
  });

  it('a second daemon on the same SQLite file stops with exit 4, touching nothing; once the first is killed (kill -9) one starts at once', async () => {
    const env = baseEnv();
    const first = await spawnDaemon({ env });
    try {
      const second = await runCli(['serve'], { env });
      expect(second.code).toBe(4);
      expect(second.stderr).toBe(
        `countersign: cannot start: another countersign daemon is using ${join(env.COUNTERSIGN_DATA_DIR, 'countersign.db')}: one daemon per SQLite file (stop the other one, give this one its own data_dir, or share a PostgreSQL database between several with storage.url)\n`,
      );
      // The first one still serves, and still counts itself in the cluster list.
      const api = createApiClient(first.url, ADMIN);
      expect((await api.get('/v1/cluster')).body.nodes).toHaveLength(1);
    } finally {
      await first.kill9();
    }
    // A crash releases the file: the restart is not refused.
    const again = await spawnDaemon({ env });
    expect((await createApiClient(again.url, ADMIN).get('/v1/health')).status).toBe(200);
    expect(await again.stop('SIGTERM')).toMatchObject({ code: 0 });
  });

  it('a port it cannot listen on stops it with exit 4, and the admin token it made is made and shown at the start that succeeds', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { COUNTERSIGN_ADMIN_TOKEN: _admin, ...env } = { ...baseEnv(), COUNTERSIGN_PORT: String((taken.address() as AddressInfo).port) };
    try {
      const r = await runCli(['serve'], { env });
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(/^countersign: cannot start: listen EADDRINUSE/);
      expect(existsSync(join(env.COUNTERSIGN_DATA_DIR, 'admin-token'))).toBe(false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    const started = await spawnDaemon({ env: { ...env, COUNTERSIGN_PORT: '0' } });
    try {
      expect(started.stderr()).toContain('admin token (shown once');
    } finally {
      await started.stop('SIGTERM');
    }
  });

  it('warns that callbacks go unsigned only when callbacks are on (an allowlist) without a secret', async () => {
    const [quiet, warned, signed] = await Promise.all([
      spawnDaemon({ env: baseEnv() }),
      spawnDaemon({ env: { ...baseEnv(), COUNTERSIGN_CALLBACKS_ALLOWLIST: 'hooks.example.com' } }),
      spawnDaemon({ env: { ...baseEnv(), COUNTERSIGN_CALLBACKS_ALLOWLIST: 'hooks.example.com', COUNTERSIGN_CALLBACKS_SECRET: 'whsec_test' } }),
    ]);
    // Logs are written asynchronously: wait for the line itself. The start-up logs before the
    // "listening" line, so the other two have had their chance to warn by the time they stop.
    await warned.outputMatching(/callbacks\.secret is not set: callbacks will be delivered unsigned/);
    await Promise.all([quiet, warned, signed].map((d) => d.stop('SIGTERM')));
    expect(quiet.output()).not.toContain('unsigned');
    expect(signed.output()).not.toContain('unsigned');
  });
});

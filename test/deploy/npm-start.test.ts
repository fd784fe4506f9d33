import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnDaemon } from '../helpers/daemon-process.js';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * `npm start` (docs/docker.md) on a fresh clone (after `npm install`) builds if needed, migrates
 * and serves with SQLite under ./data. The clone is the files git would check out, with the
 * installed node_modules linked in (installing is not what is under test here).
 */
describe('npm start on a fresh clone', () => {
  const clone = mkdtempSync(join(tmpdir(), 'countersign-clone-'));
  afterAll(() => rmSync(clone, { recursive: true, force: true }));

  it('builds when dist/ is missing, serves with ./data, and does not rebuild the second time', { timeout: 300_000 }, async () => {
    const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' })
      .split('\0')
      .filter((f) => f && existsSync(join(ROOT, f)));
    for (const f of files) {
      mkdirSync(dirname(join(clone, f)), { recursive: true });
      cpSync(join(ROOT, f), join(clone, f));
    }
    expect(existsSync(join(clone, 'dist'))).toBe(false);
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir');

    // Port 0 instead of 7470 so a daemon already running on this machine is not in the way.
    const env = { COUNTERSIGN_PORT: '0', COUNTERSIGN_LOG_LEVEL: 'warn' };
    const first = await spawnDaemon({ argv: ['npm', 'start'], cwd: clone, env, group: true });
    try {
      expect(first.output()).toContain('countersign: building…');
      expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(existsSync(join(clone, 'dist', 'cli.js'))).toBe(true);
      expect(existsSync(join(clone, 'data', 'countersign.db'))).toBe(true);
      expect(first.output()).toContain(`also in ${join(clone, 'data')}/admin-token`);
      const health = await fetch(`${first.url}/v1/health`);
      expect(await health.json()).toMatchObject({ status: 'ok' });
    } finally {
      // Ctrl-C in a terminal signals the whole process group (npm, its shell and the daemon).
      await first.stop('SIGINT');
    }
    await expect(fetch(`${first.url}/v1/health`)).rejects.toThrow();

    const second = await spawnDaemon({ argv: ['npm', 'start'], cwd: clone, env, group: true });
    try {
      expect(second.output()).not.toContain('building');
      expect(second.output()).not.toContain('admin token (shown once');
      expect((await fetch(`${second.url}/v1/health`)).status).toBe(200);
      // A supervisor signals npm alone: the daemon must get it and stop, not live on as an orphan.
      process.kill(second.child.pid!, 'SIGTERM');
      await expect
        .poll(
          () =>
            fetch(`${second.url}/v1/health`).then(
              () => 'up',
              () => 'down',
            ),
          { timeout: 15_000 },
        )
        .toBe('down');
    } finally {
      await second.stop('SIGKILL').catch(() => undefined);
    }
  });
});

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dockerignoreRules, isIgnored } from './docker-context.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** A daemon started anywhere in a checkout leaves its state there: it is never built in or committed. */
describe("a daemon's state in the checkout", () => {
  const state = ['x/admin-token', 'x/countersign.db', 'x/countersign.db-wal', 'x/countersign.db-shm', 'x/countersign.db.lock', 'admin-token', 'countersign.db'];

  it('is left out of the Docker build context', () => {
    const rules = dockerignoreRules(ROOT);
    for (const path of state) expect(isIgnored(path, rules), path).toBe(true);
    expect(isIgnored('src/auth/admin-token.ts', rules)).toBe(false);
  });

  it('is ignored by git', () => {
    const ignored = execFileSync('git', ['check-ignore', '--no-index', ...state, 'src/auth/admin-token.ts'], { cwd: ROOT, encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(ignored).toEqual(state);
  });

  it('is not in the repository', () => {
    const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n');
    expect(tracked.filter((p) => /(^|\/)admin-token$|\.db(-wal|-shm|\.lock)?$/.test(p))).toEqual([]);
  });
});

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expectError, requestCount } from '../helpers/request-api.js';
import { startTestServer, TEST_STORE, type TestServer } from '../helpers/test-server.js';

/**
 * A full disk under the SQLite file, for real: a small tmpfs. Mounting needs root; elsewhere
 * the case is skipped with a warning.
 */
function smallDisk(): string | null {
  if (process.getuid?.() !== 0) return null;
  const dir = mkdtempSync(join(tmpdir(), 'countersign-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
}

describe.skipIf(TEST_STORE !== 'sqlite')('SQLite on a full disk', () => {
  let t: TestServer | undefined;
  let disk: string | null = null;
  afterEach(async () => {
    await t?.close();
    t = undefined;
    if (disk) {
      execFileSync('umount', [disk]);
      rmSync(disk, { recursive: true, force: true });
    }
    disk = null;
  });

  it('answers 503 storage_unavailable and health 503, stores nothing half-way, and takes writes again once there is room', async (ctx) => {
    disk = smallDisk();
    if (!disk) {
      console.warn('sqlite-disk-full.test.ts: SKIPPED: cannot mount a tmpfs (needs root)');
      return ctx.skip();
    }
    t = await startTestServer({ data_dir: disk });
    const filler = join(disk, 'filler');
    // Fill what is left of the disk.
    try {
      writeFileSync(filler, Buffer.alloc(4 * 1024 * 1024));
    } catch {
      // ENOSPC: the disk is full now.
    }
    const big = { title: 'full', summary: 'x'.repeat(60_000) };
    let refused: Awaited<ReturnType<TestServer['api']['post']>> | undefined;
    for (let i = 0; i < 50 && !refused; i++) {
      const res = await t.api.post('/v1/requests', big);
      if (res.status !== 201) refused = res;
    }
    expect(refused).toBeDefined();
    expectError(refused!, 503, 'storage_unavailable', 'full');
    const health = await t.api.get('/v1/health');
    expect(health.status, health.text).toBe(503);
    const stored = await requestCount(t.api);

    rmSync(filler, { force: true });
    const again = await t.api.post('/v1/requests', { title: 'room again' });
    expect(again.status, again.text).toBe(201);
    expect((await t.api.get('/v1/health')).status).toBe(200);
    expect(await requestCount(t.api)).toBe(stored + 1);
  });
});

import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, TEST_STORE, type TestServer } from '../helpers/test-server.js';

/**
 * Issue 10, item 10: the database and its -wal/-shm files hold every request and token digest;
 * they were created 0644 when the data directory already existed.
 */
// The SQLite file's modes: with PostgreSQL there is no database file in the data directory.
describe.skipIf(TEST_STORE === 'postgres')('data file modes', () => {
  let t: TestServer | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const mode = (path: string) => statSync(path).mode & 0o777;

  it('countersign.db, -wal and -shm are 0600 in a data directory that already existed, whatever the umask', async () => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-modes-'));
    const previous = process.umask(0o022);
    try {
      t = await startTestServer({ data_dir: dir });
      expect((await t.api.post('/v1/requests', { title: 'x' })).status).toBe(201);
      for (const name of ['countersign.db', 'countersign.db-wal', 'countersign.db-shm']) {
        const path = join(dir, name);
        expect(existsSync(path), name).toBe(true);
        expect(mode(path).toString(8), name).toBe('600');
      }
      expect(mode(join(dir, 'countersign.db')) & 0o077).toBe(0);
    } finally {
      process.umask(previous);
    }
  });

  it('files an earlier version left readable are tightened at the next start', async () => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-modes-'));
    t = await startTestServer({ data_dir: dir });
    expect((await t.api.post('/v1/requests', { title: 'x' })).status).toBe(201);
    const files = ['countersign.db', 'countersign.db-wal', 'countersign.db-shm'].map((name) => join(dir!, name)).filter((f) => existsSync(f));
    for (const f of files) chmodSync(f, 0o644);
    await t.close();
    t = await startTestServer({ data_dir: dir });
    for (const f of ['countersign.db', 'countersign.db-wal', 'countersign.db-shm']) expect(mode(join(dir, f)).toString(8), f).toBe('600');
  });
});

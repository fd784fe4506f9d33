import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/store.js';
import { storedRequest } from '../helpers/stored-request.js';

// Random keys land on random pages of the pending-dedupe index.
const stored = (n: number, now: number) =>
  storedRequest({ title: `Run migration ${n}`, summary: 'x'.repeat(400), created_at: now, dedupe_key: `key-${Math.random().toString(36).slice(2)}-${n}` });

/** Files this process has open that SQLite made as temporary files (unlinked `etilqs_*`). */
const openTempFiles = () =>
  readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.includes('etilqs_') ? [target] : [];
    } catch {
      return [];
    }
  });

// Every write of a group commit runs in a savepoint, and SQLite keeps the pages a savepoint
// changes in a statement journal. By default a journal over 64 KiB spills to a temporary file, so
// a batch of creates (about a dozen B-tree pages each) made thousands of file writes a second
// that nothing ever reads back: the daemon keeps them in memory.
describe.skipIf(!existsSync('/proc/self/fd'))('SQLite statement journals', () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-stmt-journal-'));
    store = openSqliteStore(join(dir, 'countersign.db'), { synchronous: 'full' });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stay in memory while a batch writes far more than 64 KiB of existing pages in one savepoint', async () => {
    const now = 1_700_000_000_000;
    // Enough committed rows that random keys hit many different index pages.
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(Array.from({ length: 200 }, (_, i) => store.write((tx) => tx.requests.add(stored(batch * 200 + i, now + batch * 200 + i)))));
    }
    let seen: string[] = [];
    // Two writes in one turn: each runs in its own savepoint.
    await Promise.all([
      store.write(async (tx) => {
        for (let i = 0; i < 300; i++) await tx.requests.add(stored(10_000 + i, now + 10_000 + i));
        seen = openTempFiles();
      }),
      store.write((tx) => tx.requests.add(stored(20_000, now + 20_000))),
    ]);
    expect(seen).toEqual([]);
    expect(await store.requests.list({ status: ['pending'], limit: 3000 })).toHaveLength(2301);
  });
});

import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createBlobStore } from '../../src/blobs/blob-store.js';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import type { Store } from '../../src/storage/store.js';
import { freshPostgresSchema, TEST_POSTGRES_URL, type FreshPostgres } from '../helpers/postgres.js';

// Transactions run side by side only on PostgreSQL: a SQLite store takes one writer at a time.
describe.skipIf(!TEST_POSTGRES_URL)('an upload finishing while a sweep deletes the same bytes', () => {
  let db: FreshPostgres | undefined;
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    await db?.drop();
  });
  it('stores them again: the upload never answers with the hash of a blob that is gone', async () => {
    db = await freshPostgresSchema();
    store = await openPostgresStore({ url: db.url, poolSize: 5, node: 'a', log: pino({ level: 'silent' }), pollMs: 200 });
    let now = 1_000_000;
    const clock = { now: () => now } as never;
    const blobs = createBlobStore({ store, clock, quotaBytes: 1e9 });
    const bytes = Buffer.from('hello blob');
    const first = await blobs.begin('admin', { limited: false });
    await first.write(bytes);
    const { hash } = await first.finish();
    now += 10 * 60 * 60_000;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let claimed!: () => void;
    const claimedP = new Promise<void>((r) => (claimed = r));
    const sweep = store.write(async (tx) => {
      const hashes = await tx.blobs.claimUnreferenced(now - 60_000, 10);
      claimed();
      await gate;
      for (const h of hashes) await tx.blobs.delete(h);
      return hashes.length;
    });
    await claimedP;
    const second = await blobs.begin('admin', { limited: false });
    await second.write(bytes);
    const finishing = second.finish();
    // The upload finds the row still there and waits on the sweep's lock to count its retention.
    await new Promise((r) => setTimeout(r, 500));
    release();
    expect(await sweep).toBe(1);
    expect((await finishing).hash).toBe(hash);
    // The upload answered with the hash: its bytes must be there.
    expect(await store.blobs.size(hash)).toBe(bytes.length);
  });
});

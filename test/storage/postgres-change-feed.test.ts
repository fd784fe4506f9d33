import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresChangeFeed } from '../../src/storage/postgres/postgres-change-feed.js';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import type { Change, Store } from '../../src/storage/store.js';
import { freshPostgresSchema, TEST_POSTGRES_URL, type FreshPostgres } from '../helpers/postgres.js';

/**
 * The change log a daemon reads other daemons' changes from: a seq that commits late (a slow
 * COMMIT: a synchronous standby, a stalled disk) is waited for as long as its transaction runs,
 * never skipped, so its wake-up comes late rather than never.
 */
describe.skipIf(!TEST_POSTGRES_URL)('the PostgreSQL change feed', () => {
  let db: FreshPostgres;
  let store: Store;
  let pool: pg.Pool;
  let feed: ReturnType<typeof createPostgresChangeFeed>;
  const heard: Change[] = [];

  beforeAll(async () => {
    db = await freshPostgresSchema();
    // Opening a store migrates the schema.
    store = await openPostgresStore({ url: db.url, poolSize: 2, node: 'n', log: pino({ level: 'silent' }) });
    // BIGINT read as numbers, as the store's own pool reads them.
    const types = { getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 ? Number : pg.types.getTypeParser(oid, format)) } as never;
    pool = new pg.Pool({ connectionString: db.url, max: 4, types });
    feed = createPostgresChangeFeed({
      pool,
      connect: () => new pg.Client({ connectionString: db.url }),
      node: 'watcher',
      log: pino({ level: 'silent' }),
      pollMs: 50,
      gapMinMs: 100,
    });
    await feed.start();
    feed.subscribe((c) => heard.push(c));
  });
  afterAll(async () => {
    await feed?.stop();
    await pool?.end();
    await store?.close();
    await db?.drop();
  });

  const change = (type: string) => pool.query("INSERT INTO changes (type, node) VALUES ($1, 'other') RETURNING seq", [type]);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('waits for a seq whose COMMIT comes long after the next one, and hears it once', async () => {
    const slow = await pool.connect();
    try {
      await slow.query('BEGIN');
      await slow.query("INSERT INTO changes (type, node) VALUES ('slow.commit', 'other')");
      await change('after.slow');
      await expect.poll(() => heard.map((c) => c.type)).toContain('after.slow');
      // Fifteen times the least wait, the feed reading all along.
      await sleep(1500);
      await slow.query('COMMIT');
    } finally {
      slow.release();
    }
    await expect.poll(() => heard.map((c) => c.type)).toContain('slow.commit');
    await change('later');
    await expect.poll(() => heard.map((c) => c.type)).toContain('later');
    expect(heard.map((c) => c.type)).toEqual(['after.slow', 'slow.commit', 'later']);
  });

  it('a feed that starts while a change below the newest is still committing hears it once it commits', async () => {
    const slow = await pool.connect();
    const late: Change[] = [];
    let fresh: ReturnType<typeof createPostgresChangeFeed> | undefined;
    try {
      await slow.query('BEGIN');
      await slow.query("INSERT INTO changes (type, node) VALUES ('committing.at.start', 'other')");
      await change('newest.at.start');
      fresh = createPostgresChangeFeed({
        pool,
        connect: () => new pg.Client({ connectionString: db.url }),
        node: 'newcomer',
        log: pino({ level: 'silent' }),
        pollMs: 50,
        gapMinMs: 100,
      });
      await fresh.start();
      fresh.subscribe((c) => late.push(c));
      await sleep(500);
      await slow.query('COMMIT');
      await expect.poll(() => late.map((c) => c.type)).toContain('committing.at.start');
      // What had committed before the start is not news to it.
      expect(late.map((c) => c.type)).toEqual(['committing.at.start']);
    } finally {
      slow.release();
      await fresh?.stop();
    }
  });

  it('moves past a seq whose transaction rolled back, without hearing anything twice', async () => {
    heard.length = 0;
    const gone = await pool.connect();
    try {
      await gone.query('BEGIN');
      await gone.query("INSERT INTO changes (type, node) VALUES ('rolled.back', 'other')");
      await change('beside.rollback');
      await gone.query('ROLLBACK');
    } finally {
      gone.release();
    }
    await sleep(500);
    await change('last');
    await expect.poll(() => heard.map((c) => c.type)).toContain('last');
    await sleep(300);
    expect(heard.map((c) => c.type)).toEqual(['beside.rollback', 'last']);
  });
});

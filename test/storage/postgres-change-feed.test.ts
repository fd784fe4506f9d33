import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresChangeFeed } from '../../src/storage/postgres/postgres-change-feed.js';
import { openPostgresStore, type PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import type { Change, Store } from '../../src/storage/store.js';
import { freshPostgresDatabase, freshPostgresSchema, TEST_POSTGRES_URL, type FreshPostgres } from '../helpers/postgres.js';

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

/**
 * Rows are pruned from the change log after a while. A feed that did not read them first (its
 * daemon was cut off from the database for longer than that) hears one `changes.lost`, carrying
 * when it last read the whole log, and goes on above the pruned mark; a prune of rows it has read
 * is no loss. Every read here is an explicit catchUp(): the feeds never poll, and nothing notifies
 * them, on a database of their own (notifications reach every listener of a database, and other
 * test files' daemons, in schemas of the shared test database, would wake these feeds up).
 */
describe.skipIf(!TEST_POSTGRES_URL)('the PostgreSQL change feed after a prune', () => {
  let db: FreshPostgres;
  let store: PostgresStore;
  let pool: pg.Pool;
  const feeds: Array<ReturnType<typeof createPostgresChangeFeed>> = [];

  beforeAll(async () => {
    db = await freshPostgresDatabase();
    store = await openPostgresStore({ url: db.url, poolSize: 2, node: 'n', log: pino({ level: 'silent' }) });
    const types = { getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 ? Number : pg.types.getTypeParser(oid, format)) } as never;
    pool = new pg.Pool({ connectionString: db.url, max: 4, types });
  });
  afterAll(async () => {
    for (const f of feeds) await f.stop();
    await pool?.end();
    await store?.close();
    await db?.drop();
  });

  async function watcher() {
    const feed = createPostgresChangeFeed({
      pool,
      connect: () => new pg.Client({ connectionString: db.url }),
      node: 'watcher',
      log: pino({ level: 'silent' }),
      pollMs: 3_600_000,
      gapMinMs: 100,
    });
    feeds.push(feed);
    await feed.start();
    const heard: Change[] = [];
    feed.subscribe((c) => heard.push(c));
    return { feed, heard, types: () => heard.map((c) => c.type) };
  }
  const change = async (type: string) =>
    Number((await pool.query<{ seq: number }>("INSERT INTO changes (type, node) VALUES ($1, 'other') RETURNING seq", [type])).rows[0]!.seq);
  const pruneAll = () => store.pruneChanges(Date.now() + 60_000);
  const mark = async () => Number((await pool.query<{ seq: number }>('SELECT seq FROM changes_pruned WHERE id = 1')).rows[0]!.seq);

  it('rows pruned before the feed read them: one changes.lost, since its last complete read, then the rows above the mark', async () => {
    const w = await watcher();
    const before = Date.now();
    await w.feed.catchUp();
    const after = Date.now();
    await change('unread.1');
    const last = await change('unread.2');
    await pruneAll();
    expect(await mark()).toBe(last);
    await change('above.mark');
    await w.feed.catchUp();
    expect(w.types()).toEqual(['changes.lost', 'above.mark']);
    expect(w.heard[0]!.since).toBeGreaterThanOrEqual(before);
    expect(w.heard[0]!.since).toBeLessThanOrEqual(after);
    await change('later');
    await w.feed.catchUp();
    expect(w.types()).toEqual(['changes.lost', 'above.mark', 'later']);
  });

  it('a prune of rows the feed has read is no loss', async () => {
    const w = await watcher();
    await change('read.first');
    await w.feed.catchUp();
    await pruneAll();
    await change('next');
    await w.feed.catchUp();
    expect(w.types()).toEqual(['read.first', 'next']);
  });

  it('the mark only rises: a prune with nothing old enough leaves it', async () => {
    const before = await mark();
    await change('recent');
    await store.pruneChanges(0);
    expect(await mark()).toBe(before);
  });

  it('a seq still awaited when rows above it are pruned counts as lost', async () => {
    const w = await watcher();
    const slow = await pool.connect();
    try {
      await slow.query('BEGIN');
      await slow.query("INSERT INTO changes (type, node) VALUES ('in.flight', 'other')");
      await change('committed');
      await w.feed.catchUp();
      // Only committed rows are pruned: the one in flight stays, but is below the mark.
      await pruneAll();
      await w.feed.catchUp();
      await slow.query('COMMIT');
    } finally {
      slow.release();
    }
    await w.feed.catchUp();
    expect(w.types()).toEqual(['committed', 'changes.lost']);
  });

  it('a feed that starts after rows were pruned starts above the mark: no loss', async () => {
    await change('before.start');
    await pruneAll();
    const w = await watcher();
    await w.feed.catchUp();
    await change('after.start');
    await w.feed.catchUp();
    expect(w.types()).toEqual(['after.start']);
  });

  it('after a jump wider than MAX_GAP, still waits for the seqs just below the new row', async () => {
    const w = await watcher();
    const { rows } = await pool.query<{ seq: number }>('SELECT max(seq) AS seq FROM changes');
    // The sequence moved far ahead (set by hand, or many seqs taken and rolled back).
    await pool.query(`ALTER TABLE changes ALTER COLUMN seq RESTART WITH ${Number(rows[0]!.seq ?? 0) + 20_000}`);
    const slow = await pool.connect();
    try {
      await slow.query('BEGIN');
      await slow.query("INSERT INTO changes (type, node) VALUES ('in.flight', 'other')");
      await change('after.jump');
      await w.feed.catchUp();
      await w.feed.catchUp();
      expect(w.types()).toEqual(['after.jump']);
      await slow.query('COMMIT');
    } finally {
      slow.release();
    }
    await w.feed.catchUp();
    expect(w.types()).toEqual(['after.jump', 'in.flight']);
  });
});

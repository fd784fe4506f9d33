import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import type { HandupRequest } from '../../src/requests/request-schema.js';
import { batchKeyLookups } from '../../src/storage/postgres/batched-key-lookups.js';
import { createPostgresRunner } from '../../src/storage/postgres/postgres-runner.js';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import type { StoredRequest } from '../../src/storage/request-records.js';
import { createSqlRecords } from '../../src/storage/sql/sql-records.js';
import { postgresDialect, type SqlRunner } from '../../src/storage/sql/sql-runner.js';
import type { Store } from '../../src/storage/store.js';
import { freshPostgresSchema, TEST_POSTGRES_URL, type FreshPostgres } from '../helpers/postgres.js';

function stored(dedupeKey: string | null, nativeKey: string | null = null): StoredRequest {
  const now = Date.now();
  const record = {
    id: newId(now),
    title: 't',
    kind: 'custom',
    dedupe_key: dedupeKey,
    status: 'pending',
    content_hash: 'sha256:0',
    created_at: now,
    source: { agent: null, session: null },
  };
  return {
    record: record as unknown as HandupRequest,
    format: nativeKey ? 'ask' : 'handup',
    submitter: 'admin',
    nativeKey,
    nativeContext: null,
    nativeReply: null,
    resolvedAt: null,
  };
}

// The combined statement's answers are checked on both stores by the store contract; this counts
// what the daemon sends to PostgreSQL for them.
describe.skipIf(!TEST_POSTGRES_URL)('key lookups on PostgreSQL', () => {
  let db: FreshPostgres;
  let store: Store;
  let pool: pg.Pool;
  const sent: string[] = [];
  let lookups: ReturnType<typeof batchKeyLookups>;

  beforeAll(async () => {
    db = await freshPostgresSchema();
    store = await openPostgresStore({ url: db.url, poolSize: 2, node: 'n', log: pino({ level: 'silent' }) });
    await store.write(async (tx) => {
      await tx.requests.add(stored('a'));
      await tx.requests.add(stored(null, 'k1'));
    });
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    const runner = createPostgresRunner(pool);
    const counted: SqlRunner = {
      ...runner,
      all: (sql, params) => (sent.push(sql), runner.all(sql, params)),
      get: (sql, params) => (sent.push(sql), runner.get(sql, params)),
    };
    lookups = batchKeyLookups(createSqlRecords(counted, postgresDialect).requests, counted);
  });
  afterAll(async () => {
    await pool?.end();
    await store?.close();
    await db?.drop();
  });

  it('sends the lookups made in one turn as one statement, and a lookup alone as the plain one', async () => {
    sent.length = 0;
    const found = await Promise.all([
      lookups.findPendingByDedupe('admin', 'a'),
      lookups.findPendingByDedupe('admin', 'b'),
      lookups.findPendingByDedupe('bot', 'a'),
      lookups.findByNativeKey('ask', 'admin', 'k1'),
      lookups.findByNativeKey('ask', 'admin', 'k2'),
    ]);
    expect(found.map((s) => s?.record.dedupe_key ?? s?.nativeKey ?? null)).toEqual(['a', null, null, 'k1', null]);
    expect(sent).toHaveLength(2);
    expect(sent.every((sql) => sql.includes('unnest('))).toBe(true);

    sent.length = 0;
    expect((await lookups.findPendingByDedupe('admin', 'a'))?.record.dedupe_key).toBe('a');
    expect(sent).toHaveLength(1);
    expect(sent[0]).not.toContain('unnest(');
  });

  it('fails every lookup of a turn whose statement cannot run, none left waiting', async () => {
    const down = new pg.Pool({ connectionString: db.url, max: 1 });
    const broken = batchKeyLookups(createSqlRecords(createPostgresRunner(down), postgresDialect).requests, createPostgresRunner(down));
    await down.end();
    const results = await Promise.allSettled([broken.findPendingByDedupe('admin', 'a'), broken.findPendingByDedupe('admin', 'b')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});

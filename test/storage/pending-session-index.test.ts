import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../src/storage/postgres/postgres-migrate.js';
import { migrateSqlite } from '../../src/storage/sqlite/sqlite-migrate.js';
import { freshPostgresSchema, TEST_POSTGRES_URL } from '../helpers/postgres.js';

// Superseding reads the pending requests of one session at every create of a format that
// supersedes; the lookup must be an index search, not a walk over every pending request.
const LOOKUP = "SELECT * FROM requests WHERE status = 'pending' AND format = ? AND submitter = ? AND session = ? ORDER BY id";

describe('the pending-by-session lookup', () => {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-session-index-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is served by requests_pending_session on SQLite', () => {
    const db = new Database(join(dir, 'countersign.db'));
    migrateSqlite(db);
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${LOOKUP}`).all('ask', 'admin', 's-1') as Array<{ detail: string }>).map((r) => r.detail).join('\n');
    db.close();
    expect(plan).toContain('USING INDEX requests_pending_session');
  });

  it.skipIf(!TEST_POSTGRES_URL)('is served by requests_pending_session on PostgreSQL', async () => {
    const fresh = await freshPostgresSchema();
    const pool = new pg.Pool({ connectionString: fresh.url, max: 1 });
    try {
      await migratePostgres(pool);
      const client = await pool.connect();
      try {
        // A table this small would be scanned whatever its indexes: ask what the planner can use.
        await client.query('SET enable_seqscan = off');
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN ${LOOKUP.replace('format = ?', 'format = $1').replace('submitter = ?', 'submitter = $2').replace('session = ?', 'session = $3')}`,
          ['ask', 'admin', 's-1'],
        );
        expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('requests_pending_session');
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
      await fresh.drop();
    }
  });
});

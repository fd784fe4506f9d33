import { join } from 'node:path';
import type { Pool } from 'pg';
import { MIGRATIONS_ROOT, newerDatabaseError, readMigrations, type Migration } from '../migrations.js';

export const POSTGRES_MIGRATIONS_DIR = join(MIGRATIONS_ROOT, 'postgres');

// Any fixed 64-bit number: the advisory lock every countersign daemon takes to migrate.
const MIGRATION_LOCK = 7470_2026_1130;

/**
 * Applies pending migrations, each in its own transaction, under a session advisory lock: when
 * several daemons start together, one migrates and the others wait, then find nothing to do.
 * Refuses a database written by a newer countersign.
 */
export async function migratePostgres(pool: Pool, migrations: Migration[] = readMigrations(POSTGRES_MIGRATIONS_DIR)): Promise<{ from: number; to: number }> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY, name TEXT NOT NULL, sha256 TEXT NOT NULL, applied_at BIGINT NOT NULL)`);
      const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
      const from = rows[0]?.v ?? 0;
      const latest = migrations.length;
      if (from > latest) throw newerDatabaseError(from, latest);
      for (const m of migrations.slice(from)) {
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_migrations (version, name, sha256, applied_at) VALUES ($1, $2, $3, $4)', [
            m.version,
            m.name,
            m.sha256,
            Date.now(),
          ]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw err;
        }
      }
      return { from, to: latest };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    }
  } finally {
    client.release();
  }
}

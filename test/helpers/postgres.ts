import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * The PostgreSQL server tests may use: `CS_TEST_POSTGRES_URL`, a superuser URL to its
 * maintenance database (e.g. postgres://postgres@127.0.0.1:5432/postgres). Unset: tests that
 * need PostgreSQL are skipped; `npm run test:all` (CI) starts a throwaway server and sets it.
 */
export const TEST_POSTGRES_URL = process.env.CS_TEST_POSTGRES_URL?.trim() || undefined;

const TEST_DATABASE = 'countersign_test';

export interface FreshPostgres {
  /** A connection URL for the daemon. */
  url: string;
  drop(): Promise<void>;
}

async function withAdmin<T>(database: string | null, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  if (!TEST_POSTGRES_URL) throw new Error('CS_TEST_POSTGRES_URL is not set');
  const url = new URL(TEST_POSTGRES_URL);
  if (database) url.pathname = `/${database}`;
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

function urlFor(database: string, schema?: string): string {
  const url = new URL(TEST_POSTGRES_URL!);
  url.pathname = `/${database}`;
  // libpq's `options`: the daemon's connections then live in this schema.
  if (schema) url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

let testDatabaseReady: Promise<void> | undefined;

/**
 * A new, empty schema in the shared test database, reached through the URL's `options`: as
 * good as a fresh database for one daemon, and ten times faster to make. `drop()` removes it.
 */
export async function freshPostgresSchema(): Promise<FreshPostgres> {
  testDatabaseReady ??= withAdmin(null, async (c) => {
    await c.query(`CREATE DATABASE ${TEST_DATABASE}`).catch((err: { code?: string }) => {
      // Another test worker made it first.
      if (err.code !== '42P04' && err.code !== '23505') throw err;
    });
  });
  await testDatabaseReady;
  const schema = `cs_${randomBytes(6).toString('hex')}`;
  await withAdmin(TEST_DATABASE, (c) => c.query(`CREATE SCHEMA ${schema}`));
  return {
    url: urlFor(TEST_DATABASE, schema),
    drop: () => withAdmin(TEST_DATABASE, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(() => undefined),
  };
}

/** A whole new database (for the multi-node tests, which restart and kill daemons). */
export async function freshPostgresDatabase(): Promise<FreshPostgres> {
  const name = `cs_db_${randomBytes(6).toString('hex')}`;
  await withAdmin(null, (c) => c.query(`CREATE DATABASE ${name}`));
  return {
    url: urlFor(name),
    drop: () =>
      withAdmin(null, async (c) => {
        // A pool's end() resolves before its connections have closed; forcing the drop then ends
        // them from the server side, which the closing client reports as an unhandled error. Give
        // closing connections a moment; a test that left some open (a killed daemon's) is forced.
        for (let i = 0; i < 40; i++) {
          const { rows } = await c.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
          if (rows[0]!.n === 0) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }),
  };
}

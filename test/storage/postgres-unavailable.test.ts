import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isConnectionError } from '../../src/storage/postgres/postgres-errors.js';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import type { Store } from '../../src/storage/store.js';
import { freshPostgresDatabase, TEST_POSTGRES_URL, type FreshPostgres } from '../helpers/postgres.js';

/**
 * A server that is there but cannot serve (a standby taking no writes while a failover is under
 * way, too many connections, out of memory or disk) is unavailable, as a stopped one is: 503
 * `storage_unavailable` and an unhealthy `/v1/health`, never a 500.
 */
describe('PostgreSQL errors that mean the database is unavailable', () => {
  it('counts a read-only transaction and class 53 with the connection errors, and nothing a statement did wrong', () => {
    for (const code of ['25006', '53300', '53100', '53200', '57P01', '08006', 'ECONNREFUSED'])
      expect(isConnectionError(Object.assign(new Error('x'), { code })), code).toBe(true);
    for (const code of ['23505', '22021', '42P01', '25P02', 'CS001']) expect(isConnectionError(Object.assign(new Error('x'), { code })), code).toBe(false);
  });
});

/** A store on a database of its own for the describe block that calls this (opened before it, closed after). */
function freshStoreForEach() {
  let db: FreshPostgres | undefined;
  let store: Store | undefined;
  beforeAll(async () => {
    db = await freshPostgresDatabase();
    store = await openPostgresStore({ url: db.url, poolSize: 2, node: 'n', log: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });
  return {
    get store(): Store {
      return store!;
    },
    dbName: () => new URL(db!.url).pathname.slice(1),
  };
}

describe.skipIf(!TEST_POSTGRES_URL)('a PostgreSQL server that takes no writes', () => {
  const fresh = freshStoreForEach();
  const name = () => fresh.dbName();

  /** Makes the database take writes or not, as a standby does, and ends its connections so the store opens new ones. */
  async function readOnly(on: boolean) {
    const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${name()} SET default_transaction_read_only = ${on ? 'on' : 'off'}`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name()]);
    } finally {
      await admin.end();
    }
  }

  /** 'ok', or the error code a call failed with. */
  const outcome = (call: Promise<unknown>) =>
    call.then(
      () => 'ok',
      (err: { code?: string }) => err.code,
    );
  const ping = () => outcome(fresh.store.ping());
  const write = () => outcome(fresh.store.write((tx) => tx.keys.ensure('k', 'v', 0)));

  it('is unhealthy while it takes no writes, and a write is 503 storage_unavailable; then both recover', async () => {
    expect(await ping()).toBe('ok');
    await readOnly(true);
    await expect.poll(ping).toBe('storage_unavailable');
    await expect(fresh.store.write((tx) => tx.keys.ensure('k', 'v', 0))).rejects.toMatchObject({ code: 'storage_unavailable', status: 503 });
    await readOnly(false);
    await expect.poll(ping).toBe('ok');
    await expect.poll(write).toBe('ok');
  });
});

describe.skipIf(!TEST_POSTGRES_URL)('a connection lost in the middle of a write transaction', () => {
  const fresh = freshStoreForEach();

  it('fails that write with storage_unavailable, never an unhandled error event that ends the daemon', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      let paused!: () => void;
      const inside = new Promise<void>((resolve) => (paused = resolve));
      let resume!: () => void;
      const gate = new Promise<void>((resolve) => (resume = resolve));
      const write = fresh.store
        .write(async (tx) => {
          await tx.keys.ensure('k', 'v', 0);
          paused();
          // Between two statements: the connection is checked out and idle in its transaction.
          await gate;
          await tx.keys.ensure('k2', 'v', 0);
        })
        .then(
          () => 'ok',
          (err: { code?: string }) => err.code,
        );
      await inside;
      // A fast shutdown or a failover ends the backend: the server says so on the idle connection.
      const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await admin.connect();
      try {
        await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND state = 'idle in transaction'", [fresh.dbName()]);
      } finally {
        await admin.end();
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      resume();
      expect(await write).toBe('storage_unavailable');
      expect(uncaught).toEqual([]);
      // The store goes on with a new connection.
      await fresh.store.write((tx) => tx.keys.ensure('k3', 'v', 0));
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});

describe.skipIf(!TEST_POSTGRES_URL)('a PostgreSQL server that refuses the login', () => {
  const open = (edit: (u: URL) => void) => {
    const url = new URL(TEST_POSTGRES_URL!);
    edit(url);
    return openPostgresStore({ url: url.toString(), poolSize: 1, node: 'n', log: pino({ level: 'silent' }) }).then(
      (store) => store.close().then(() => 'opened'),
      (err: Error) => err.message,
    );
  };

  it('says where and why, never naming the user or the password', async () => {
    const where = (u: URL) => `${u.hostname}:${u.port || '5432'}${u.pathname}`;
    const base = new URL(TEST_POSTGRES_URL!);
    const unknownUser = await open((u) => {
      u.username = 'no-such-role-x7';
      u.password = 'secret-pw-x7';
    });
    expect(unknownUser).toBe(
      `cannot use PostgreSQL at ${where(base)}: the server refused the login: check the user and password in storage.url (SQLSTATE 28000)`,
    );
    const noDatabase = await open((u) => {
      u.pathname = '/no_such_database_x7';
    });
    expect(noDatabase).toMatch(/^cannot use PostgreSQL at .*\/no_such_database_x7: the database does not exist \(SQLSTATE 3D000\)$/);
    for (const message of [unknownUser, noDatabase]) expect(message).not.toMatch(/x7-|secret-pw|no-such-role/);
  });
});

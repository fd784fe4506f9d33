import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isConnectionError } from '../../src/storage/postgres/postgres-errors.js';
import { libpqSslUrl } from '../../src/storage/postgres/libpq-ssl-url.js';
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

/** A TCP relay to PostgreSQL that can stop passing bytes while keeping its sockets open, as a frozen server or a partition looks to a client. */
async function freezableRelay(target: URL) {
  const pairs = new Set<[Socket, Socket]>();
  let frozen = false;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    if (frozen) for (const s of pair) s.pause();
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    freeze(on: boolean) {
      frozen = on;
      for (const pair of pairs)
        for (const s of pair) {
          if (on) s.pause();
          else s.resume();
        }
    },
    close: () => {
      for (const pair of pairs) for (const s of pair) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.skipIf(!TEST_POSTGRES_URL)('a PostgreSQL server that stops answering (frozen, or cut off by a partition)', () => {
  it('is unhealthy within the ping deadline, and reads and writes are 503 storage_unavailable, not a wait for TCP to give up; then all recover', async () => {
    const db = await freshPostgresDatabase();
    const relay = await freezableRelay(new URL(db.url));
    const store = await openPostgresStore({ url: relay.url, poolSize: 2, node: 'n', log: pino({ level: 'silent' }), queryTimeoutMs: 600, pingTimeoutMs: 300 });
    const outcome = (call: Promise<unknown>) =>
      call.then(
        () => 'ok',
        (err: { code?: string }) => err.code,
      );
    try {
      expect(await outcome(store.ping())).toBe('ok');
      await store.write((tx) => tx.keys.ensure('k', 'v', 0));
      relay.freeze(true);
      const [ping, read, write] = await Promise.all([
        outcome(store.ping()),
        outcome(store.requests.get('01JZZZZZZZZZZZZZZZZZZZZZZZ')),
        outcome(store.write((tx) => tx.keys.ensure('k2', 'v', 0))),
      ]);
      expect({ ping, read, write }).toEqual({ ping: 'storage_unavailable', read: 'storage_unavailable', write: 'storage_unavailable' });
      relay.freeze(false);
      await expect.poll(() => outcome(store.ping()), { timeout: 10_000 }).toBe('ok');
      await expect.poll(() => outcome(store.write((tx) => tx.keys.ensure('k3', 'v', 0))), { timeout: 10_000 }).toBe('ok');
    } finally {
      relay.freeze(false);
      await store.close();
      await relay.close();
      await db.drop();
    }
  });
});

describe.skipIf(!TEST_POSTGRES_URL)("storage.url's sslmode, read as libpq reads it", () => {
  const withMode = (mode: string) => {
    const url = new URL(TEST_POSTGRES_URL!);
    url.searchParams.set('sslmode', mode);
    return url.toString();
  };

  it('prefer falls back to a plain connection when the server speaks no TLS; require asks for TLS, and says the server has none', async () => {
    const store = await openPostgresStore({ url: withMode('prefer'), poolSize: 1, node: 'n', log: pino({ level: 'silent' }) });
    try {
      await store.ping();
    } finally {
      await store.close();
    }
    await expect(openPostgresStore({ url: withMode('require'), poolSize: 1, node: 'n', log: pino({ level: 'silent' }) })).rejects.toThrow(
      /does not support SSL/,
    );
  });

  it('tells the driver to read prefer, require and verify-ca as libpq does, not as verify-full; leaves other URLs as written', async () => {
    expect(await libpqSslUrl('postgres://u@db.example:5432/x?sslmode=require')).toBe('postgres://u@db.example:5432/x?sslmode=require&uselibpqcompat=true');
    expect(await libpqSslUrl('postgres://u@db.example/x?sslmode=verify-ca&sslrootcert=/ca.pem')).toBe(
      'postgres://u@db.example/x?sslmode=verify-ca&sslrootcert=/ca.pem&uselibpqcompat=true',
    );
    for (const url of [
      'postgres://u@db.example/x',
      'postgres://u@db.example/x?sslmode=verify-full',
      'postgres://u@db.example/x?sslmode=disable',
      'postgres://u@db.example/x?sslmode=no-verify',
      'postgres://u@db.example/x?sslmode=require&uselibpqcompat=false',
    ])
      expect(await libpqSslUrl(url)).toBe(url);
  });
});

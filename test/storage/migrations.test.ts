import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import pg from 'pg';
import { MigrationError, readMigrations } from '../../src/storage/migrations.js';
import { migratePostgres, POSTGRES_MIGRATIONS_DIR } from '../../src/storage/postgres/postgres-migrate.js';
import { migrateSqlite as migrate, SQLITE_MIGRATIONS_DIR as MIGRATIONS_DIR } from '../../src/storage/sqlite/sqlite-migrate.js';
import { freshPostgresDatabase, TEST_POSTGRES_URL } from '../helpers/postgres.js';

describe('SQLite migrations (real file)', () => {
  let dir: string;
  let db: Database.Database;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-migrate-'));
    db = new Database(join(dir, 'countersign.db'));
    db.pragma('journal_mode = WAL');
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const latest = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).length;
  const version = () => db.pragma('user_version', { simple: true });
  const tables = () => (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);

  it('takes a fresh database to the latest version', () => {
    expect(latest).toBeGreaterThanOrEqual(1);
    expect(migrate(db)).toEqual({ from: 0, to: latest });
    expect(version()).toBe(latest);
    expect(tables()).toEqual(expect.arrayContaining(['requests', 'audit', 'tokens', 'blobs', 'schema_migrations']));
    const applied = db.prepare('SELECT version, name, sha256 FROM schema_migrations ORDER BY version').all() as Array<{
      version: number;
      name: string;
      sha256: string;
    }>;
    expect(applied.map((m) => m.version)).toEqual(Array.from({ length: latest }, (_, i) => i + 1));
    expect(applied[0]!.name).toBe('0001_init');
    for (const m of applied) expect(m.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a second run is a no-op', () => {
    migrate(db);
    db.prepare("INSERT INTO tokens (id, name, digest, created_at) VALUES ('t', 'n', 'd', 1)").run();
    expect(migrate(db)).toEqual({ from: latest, to: latest });
    expect(version()).toBe(latest);
    expect(db.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get()).toEqual({ n: latest });
    expect(db.prepare('SELECT COUNT(*) AS n FROM tokens').get()).toEqual({ n: 1 });
  });

  it('refuses a database newer than the code with MigrationError, and leaves it alone', () => {
    migrate(db);
    db.pragma(`user_version = ${latest + 1}`);
    expect(() => migrate(db)).toThrow(MigrationError);
    expect(() => migrate(db)).toThrow(new RegExp(`schema version ${latest + 1}.*newer`));
    expect(version()).toBe(latest + 1);
  });

  it('applies each migration in its own transaction: a failing one leaves the previous version whole', () => {
    const mdir = join(dir, 'migrations');
    mkdirSync(mdir);
    writeFileSync(join(mdir, '0001_one.sql'), 'CREATE TABLE one (x INTEGER);');
    writeFileSync(join(mdir, '0002_two.sql'), 'CREATE TABLE two (x INTEGER); INSERT INTO nowhere VALUES (1);');
    expect(() => migrate(db, readMigrations(mdir))).toThrow();
    expect(version()).toBe(1);
    expect(tables()).toContain('one');
    expect(tables()).not.toContain('two');
  });

  it('refuses migration files out of sequence', () => {
    const mdir = join(dir, 'gap');
    mkdirSync(mdir);
    writeFileSync(join(mdir, '0001_one.sql'), 'SELECT 1;');
    writeFileSync(join(mdir, '0003_three.sql'), 'SELECT 1;');
    expect(() => readMigrations(mdir)).toThrow(MigrationError);
  });

  it('0004 keeps blobs stored before it, their bytes in chunks, the requests naming them recorded, tokens without grants', () => {
    const before = readMigrations(MIGRATIONS_DIR).filter((m) => m.version < 4);
    migrate(db, before);
    const bytes = Buffer.from('preview bytes');
    const named = `sha256:${'a'.repeat(64)}`;
    const loose = `sha256:${'b'.repeat(64)}`;
    const insertBlob = db.prepare('INSERT INTO blobs (hash, size, bytes, created_at) VALUES (?, ?, ?, ?)');
    insertBlob.run(named, bytes.length, bytes, 1000);
    insertBlob.run(loose, 1, Buffer.from('x'), 2000);
    const record = {
      id: 'R1',
      previews: [
        { type: 'text', inline: 'x' },
        { type: 'files', files: [{ path: 'a', blob: named, mime: 'text/plain', size: 13 }] },
      ],
    };
    db.prepare(
      "INSERT INTO requests (id, format, submitter, status, kind, content_hash, created_at, record) VALUES ('R1', 'handup', 'admin', 'pending', 'custom', 'h', 1, ?)",
    ).run(JSON.stringify(record));
    db.prepare("INSERT INTO tokens (id, name, digest, created_at) VALUES ('t', 'bot', 'd', 1)").run();

    migrate(db);
    expect(db.prepare('SELECT hash, n, bytes FROM blob_chunks ORDER BY hash').all()).toEqual([
      { hash: named, n: 0, bytes },
      { hash: loose, n: 0, bytes: Buffer.from('x') },
    ]);
    expect(db.prepare('SELECT hash, size, created_at, uploaded_at FROM blobs ORDER BY hash').all()).toEqual([
      { hash: named, size: bytes.length, created_at: 1000, uploaded_at: 1000 },
      { hash: loose, size: 1, created_at: 2000, uploaded_at: 2000 },
    ]);
    expect(db.prepare('SELECT hash, request_id FROM blob_refs').all()).toEqual([{ hash: named, request_id: 'R1' }]);
    expect(db.prepare('SELECT grants FROM tokens').get()).toEqual({ grants: '[]' });
  });

  describe('audit table', () => {
    beforeEach(() => {
      migrate(db);
      db.prepare("INSERT INTO audit (request_id, event, actor, at) VALUES ('r', 'created', 'admin', 1)").run();
    });

    it('rejects UPDATE', () => {
      expect(() => db.prepare("UPDATE audit SET actor = 'someone else'").run()).toThrow(/append-only/);
      expect(db.prepare('SELECT actor FROM audit').get()).toEqual({ actor: 'admin' });
    });

    it('rejects DELETE', () => {
      expect(() => db.prepare('DELETE FROM audit').run()).toThrow(/append-only/);
      expect(db.prepare('SELECT COUNT(*) AS n FROM audit').get()).toEqual({ n: 1 });
    });

    it('accepts new rows', () => {
      db.prepare("INSERT INTO audit (request_id, event, actor, at) VALUES ('r', 'decided', 'admin', 2)").run();
      expect(db.prepare('SELECT COUNT(*) AS n FROM audit').get()).toEqual({ n: 2 });
    });
  });
});

describe.runIf(TEST_POSTGRES_URL)('PostgreSQL migrations (real server)', () => {
  const latest = readMigrations(POSTGRES_MIGRATIONS_DIR).length;

  it('migrates once when several daemons start together, and a second run is a no-op', async () => {
    const db = await freshPostgresDatabase();
    const pools = [1, 2, 3].map(() => new pg.Pool({ connectionString: db.url, max: 2 }));
    try {
      const results = await Promise.all(pools.map((p) => migratePostgres(p)));
      expect(results.filter((r) => r.from === 0)).toHaveLength(1);
      expect(results.every((r) => r.to === latest)).toBe(true);
      const { rows } = await pools[0]!.query('SELECT version FROM schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(Array.from({ length: latest }, (_, i) => i + 1));
      expect(await migratePostgres(pools[0]!)).toEqual({ from: latest, to: latest });
    } finally {
      await Promise.all(pools.map((p) => p.end()));
      await db.drop();
    }
  });

  it('refuses a database newer than the code, and keeps audit rows append-only', async () => {
    const db = await freshPostgresDatabase();
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    try {
      await migratePostgres(pool);
      await pool.query("INSERT INTO audit (request_id, event, actor, at) VALUES ('r', 'created', 'admin', 1)");
      await expect(pool.query("UPDATE audit SET actor = 'someone else'")).rejects.toThrow(/append-only/);
      await expect(pool.query('DELETE FROM audit')).rejects.toThrow(/append-only/);
      await expect(pool.query('TRUNCATE audit')).rejects.toThrow(/append-only/);
      await pool.query('INSERT INTO schema_migrations (version, name, sha256, applied_at) VALUES ($1, $2, $3, $4)', [latest + 1, 'future', 'x', 1]);
      await expect(migratePostgres(pool)).rejects.toThrow(MigrationError);
      await expect(migratePostgres(pool)).rejects.toThrow(new RegExp(`schema version ${latest + 1}.*newer`));
    } finally {
      await pool.end();
      await db.drop();
    }
  });
});

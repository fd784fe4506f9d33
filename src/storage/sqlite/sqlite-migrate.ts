import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { MIGRATIONS_ROOT, newerDatabaseError, readMigrations, type Migration } from '../migrations.js';

export const SQLITE_MIGRATIONS_DIR = join(MIGRATIONS_ROOT, 'sqlite');

/**
 * Applies pending forward-only migrations, each in its own BEGIN IMMEDIATE transaction with
 * `user_version` bumped inside it, so a crash leaves the database at a whole version.
 * Refuses a database written by a newer countersign.
 */
export function migrateSqlite(db: Database.Database, migrations: Migration[] = readMigrations(SQLITE_MIGRATIONS_DIR)): { from: number; to: number } {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, sha256 TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  const from = db.pragma('user_version', { simple: true }) as number;
  const latest = migrations.length;
  if (from > latest) throw newerDatabaseError(from, latest);
  for (const m of migrations.slice(from)) {
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, sha256, applied_at) VALUES (?, ?, ?, ?)').run(m.version, m.name, m.sha256, Date.now());
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
  }
  return { from, to: latest };
}

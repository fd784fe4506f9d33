import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './database.js';

export const MIGRATIONS_DIR = join(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'), 'migrations');

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return files.map((file, i) => {
    const version = Number(file.slice(0, 4));
    if (version !== i + 1) throw new MigrationError(`migration ${file} is out of sequence: expected version ${i + 1}`);
    return { version, name: file.replace(/\.sql$/, ''), sql: readFileSync(join(dir, file), 'utf8') };
  });
}

/**
 * Applies pending forward-only migrations, each in its own BEGIN IMMEDIATE transaction with
 * `user_version` bumped inside it, so a crash leaves the database at a whole version.
 * Refuses a database written by a newer countersign.
 */
export function migrate(db: Db, migrations: Migration[] = readMigrations()): { from: number; to: number } {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, sha256 TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  const from = db.pragma('user_version', { simple: true }) as number;
  const latest = migrations.length;
  if (from > latest) {
    throw new MigrationError(
      `the database is at schema version ${from}, newer than this countersign knows (${latest}); upgrade countersign or use another data dir`,
    );
  }
  for (const m of migrations.slice(from)) {
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, sha256, applied_at) VALUES (?, ?, ?, ?)').run(
        m.version,
        m.name,
        createHash('sha256').update(m.sql).digest('hex'),
        Date.now(),
      );
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
  }
  return { from, to: latest };
}

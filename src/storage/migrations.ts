import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Forward-only numbered SQL files, one folder per dialect: migrations/sqlite, migrations/postgres. */
export const MIGRATIONS_ROOT = join(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'), 'migrations');

export interface Migration {
  version: number;
  name: string;
  sql: string;
  sha256: string;
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export function readMigrations(dir: string): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  return files.map((file, i) => {
    const version = Number(file.slice(0, 4));
    if (version !== i + 1) throw new MigrationError(`migration ${file} is out of sequence: expected version ${i + 1}`);
    const sql = readFileSync(join(dir, file), 'utf8');
    return { version, name: file.replace(/\.sql$/, ''), sql, sha256: createHash('sha256').update(sql).digest('hex') };
  });
}

export function newerDatabaseError(found: number, latest: number): MigrationError {
  return new MigrationError(
    `the database is at schema version ${found}, newer than this countersign knows (${latest}); upgrade countersign or use another database`,
  );
}

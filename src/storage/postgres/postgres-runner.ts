import type { ClientBase, Pool } from 'pg';
import type { SqlRunner } from '../sql/sql-runner.js';
import { storageError } from './postgres-errors.js';

const numbered = new Map<string, string>();

/** `?` placeholders (outside quoted strings) → `$1`, `$2`, … once per SQL text. */
export function numberPlaceholders(sql: string): string {
  let out = numbered.get(sql);
  if (out !== undefined) return out;
  let n = 0;
  let quoted = false;
  out = '';
  for (const ch of sql) {
    if (ch === "'") quoted = !quoted;
    out += ch === '?' && !quoted ? `$${++n}` : ch;
  }
  numbered.set(sql, out);
  return out;
}

/** A SqlRunner over a pg client (inside a transaction) or the pool (one statement each). */
export function createPostgresRunner(db: Pool | ClientBase): SqlRunner {
  async function query<T>(sql: string, params: readonly unknown[]) {
    try {
      return await db.query<T & object>(numberPlaceholders(sql), params as unknown[]);
    } catch (err) {
      throw storageError(err);
    }
  }
  return {
    async all<T>(sql: string, params: readonly unknown[] = []) {
      return (await query<T>(sql, params)).rows as T[];
    },
    async get<T>(sql: string, params: readonly unknown[] = []) {
      return (await query<T>(sql, params)).rows[0] as T | undefined;
    },
    async run(sql: string, params: readonly unknown[] = []) {
      return (await query(sql, params)).rowCount ?? 0;
    },
  };
}

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

/** Named statements per connection at most; texts beyond (list filters vary) go unnamed. */
const MAX_NAMED = 500;
const statements = new Map<string, { name?: string; text: string }>();

/**
 * The daemon's hot statements are a fixed set of texts, so each is a named prepared statement:
 * PostgreSQL parses and plans it once per connection instead of on every call.
 */
function prepared(sql: string): { name?: string; text: string } {
  let stmt = statements.get(sql);
  if (!stmt) {
    const text = numberPlaceholders(sql);
    stmt = statements.size < MAX_NAMED ? { name: `cs_${statements.size + 1}`, text } : { text };
    if (stmt.name) statements.set(sql, stmt);
  }
  return stmt;
}

/** A SqlRunner over a pg client (inside a transaction) or the pool (one statement each). */
export function createPostgresRunner(db: Pool | ClientBase): SqlRunner {
  async function query<T>(sql: string, params: readonly unknown[]) {
    try {
      return await db.query<T & object>({ ...prepared(sql), values: params as unknown[] });
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

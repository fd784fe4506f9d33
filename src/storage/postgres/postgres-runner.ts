import pg, { type ClientBase, type Pool } from 'pg';
import type { SqlRunner } from '../sql/sql-runner.js';
import { storageError } from './postgres-errors.js';

/**
 * `sql` with its `?` placeholders (outside quoted strings) replaced, the i-th (from 0) by
 * `replace(i)`; also how many there were.
 */
function replacePlaceholders(sql: string, replace: (i: number) => string): { text: string; count: number } {
  let count = 0;
  let quoted = false;
  let text = '';
  for (const ch of sql) {
    if (ch === "'") quoted = !quoted;
    text += ch === '?' && !quoted ? replace(count++) : ch;
  }
  return { text, count };
}

/** `?` placeholders (outside quoted strings) → `$1`, `$2`, …. */
export function numberPlaceholders(sql: string): string {
  return replacePlaceholders(sql, (i) => `$${i + 1}`).text;
}

/** Named statements per connection at most; texts beyond (list filters vary) go unnamed. */
const MAX_NAMED = 500;
const statements = new Map<string, { name: string; text: string }>();

/**
 * The daemon's hot statements are a fixed set of texts, so each is a named prepared statement:
 * PostgreSQL parses and plans it once per connection instead of on every call.
 */
function prepared(sql: string): { name?: string; text: string } {
  const known = statements.get(sql);
  if (known) return known;
  const text = numberPlaceholders(sql);
  if (statements.size >= MAX_NAMED) return { text };
  const stmt = { name: `cs_${statements.size + 1}`, text };
  statements.set(sql, stmt);
  return stmt;
}

/** A value written into SQL text: only the scalar types the daemon's statements bind. */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return pg.escapeLiteral(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  throw new Error(`cannot write a ${typeof value} into SQL text`);
}

/** `sql` with each `?` placeholder (outside quoted strings) replaced by its value as a literal. */
export function inlineParams(sql: string, params: readonly unknown[]): string {
  const { text, count } = replacePlaceholders(sql, (i) => sqlLiteral(params[i]));
  if (count !== params.length) throw new Error(`${params.length} values for ${count} placeholders`);
  return text;
}

/** A SqlRunner over the pool: one statement each, nothing deferred. */
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
    async defer(sql: string, params: readonly unknown[] = []) {
      await query(sql, params);
    },
  };
}

export interface TransactionRunner extends SqlRunner {
  /** The deferred statements not sent yet, as SQL text ('' when none); the runner forgets them. */
  takeDeferred(): string;
}

/**
 * A SqlRunner over one pooled client, for the transaction it runs. Deferred statements wait,
 * written out as SQL text, and go in the same round trip as the next statement (a simple query
 * ahead of it) or the COMMIT (postgres-store.ts): every round trip costs the daemon a socket
 * write and read, the dearest part of a PostgreSQL write.
 */
export function createTransactionRunner(client: ClientBase): TransactionRunner {
  const pool = createPostgresRunner(client);
  let deferred: string[] = [];
  async function flushed() {
    if (deferred.length === 0) return;
    const text = deferred.join('; ');
    deferred = [];
    try {
      await client.query(text);
    } catch (err) {
      throw storageError(err);
    }
  }
  return {
    all: async (sql, params) => (await flushed(), pool.all(sql, params)),
    get: async (sql, params) => (await flushed(), pool.get(sql, params)),
    run: async (sql, params) => (await flushed(), pool.run(sql, params)),
    async defer(sql: string, params: readonly unknown[] = []) {
      deferred.push(inlineParams(sql, params));
    },
    takeDeferred() {
      const text = deferred.join('; ');
      deferred = [];
      return text;
    },
  };
}

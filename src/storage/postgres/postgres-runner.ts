import type { ClientBase, Pool } from 'pg';
import type { SqlRunner } from '../sql/sql-runner.js';
import { storageError } from './postgres-errors.js';

/** Texts (the daemon's statements are a fixed set) whose pieces are remembered, at most. */
const MAX_TEMPLATES = 500;
const templates = new Map<string, string[]>();

/** `sql` cut at its `?` placeholders outside quoted strings: n placeholders, n + 1 pieces. */
function piecesOf(sql: string): string[] {
  const known = templates.get(sql);
  if (known) return known;
  const pieces: string[] = [];
  let quoted = false;
  let from = 0;
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i];
    if (ch === "'") quoted = !quoted;
    else if (ch === '?' && !quoted) {
      pieces.push(sql.slice(from, i));
      from = i + 1;
    }
  }
  pieces.push(sql.slice(from));
  if (templates.size < MAX_TEMPLATES) templates.set(sql, pieces);
  return pieces;
}

/** `?` placeholders (outside quoted strings) → `$1`, `$2`, …. */
export function numberPlaceholders(sql: string): string {
  return piecesOf(sql).reduce((text, piece, i) => `${text}$${i}${piece}`);
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

/**
 * A string as a SQL literal, exactly as pg.escapeLiteral writes it (quotes doubled; with a
 * backslash, `E'…'` with backslashes doubled) but without building it a character at a time:
 * deferred statements carry whole request records, and that loop was most of a write's garbage.
 */
function quoted(value: string): string {
  const text = value.includes("'") ? value.replaceAll("'", "''") : value;
  return value.includes('\\') ? ` E'${text.replaceAll('\\', '\\\\')}'` : `'${text}'`;
}

/** A value written into SQL text: only the scalar types the daemon's statements bind. */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return quoted(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  throw new Error(`cannot write a ${typeof value} into SQL text`);
}

/** `sql` with each `?` placeholder (outside quoted strings) replaced by its value as a literal. */
export function inlineParams(sql: string, params: readonly unknown[]): string {
  const pieces = piecesOf(sql);
  if (pieces.length - 1 !== params.length) throw new Error(`${params.length} values for ${pieces.length - 1} placeholders`);
  let text = pieces[0]!;
  for (let i = 0; i < params.length; i++) text += sqlLiteral(params[i]) + pieces[i + 1]!;
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
  /** Starts a transaction whose BEGIN goes with its first round trip. */
  begin(): void;
  /** Starts a transaction with `BEGIN; sql` in one round trip; resolves with the rows of `sql`. */
  beginWith<T>(sql: string): Promise<T[]>;
  /**
   * Sends the deferred statements, then `statements` (SQL text), then COMMIT, in one round trip;
   * a transaction that has sent nothing and deferred nothing but its BEGIN sends nothing.
   */
  commit(statements: string[]): Promise<void>;
  /** Forgets the deferred statements (the transaction failed) and whether it needs a ROLLBACK. */
  discard(): { opened: boolean };
}

/**
 * A SqlRunner over one pooled client, for the transaction it runs. Deferred statements (its
 * BEGIN among them) wait, written out as SQL text, and are sent ahead of the next statement or
 * with the COMMIT (postgres-store.ts), so a transaction that only writes is one round trip:
 * every round trip costs the daemon a socket write and read, the dearest part of a PostgreSQL
 * write.
 */
export function createTransactionRunner(client: ClientBase): TransactionRunner {
  const pool = createPostgresRunner(client);
  let deferred: string[] = [];
  let opened = false;
  async function send(text: string): Promise<unknown> {
    opened = true;
    try {
      return await client.query(text);
    } catch (err) {
      throw storageError(err);
    }
  }
  async function flushed() {
    if (deferred.length === 0) return;
    const text = deferred.join('; ');
    deferred = [];
    await send(text);
  }
  return {
    all: async (sql, params) => (await flushed(), pool.all(sql, params)),
    get: async (sql, params) => (await flushed(), pool.get(sql, params)),
    run: async (sql, params) => (await flushed(), pool.run(sql, params)),
    async defer(sql: string, params: readonly unknown[] = []) {
      deferred.push(inlineParams(sql, params));
    },
    begin() {
      opened = false;
      deferred = ['BEGIN'];
    },
    async beginWith<T>(sql: string) {
      opened = false;
      deferred = [];
      const results = (await send(`BEGIN; ${sql}`)) as Array<{ rows: T[] }>;
      return results[1]!.rows;
    },
    async commit(statements) {
      const text = [...deferred, ...statements];
      deferred = [];
      if (!opened && statements.length === 0 && text.length === 1) return;
      text.push('COMMIT');
      await send(text.join('; '));
    },
    discard() {
      deferred = [];
      return { opened };
    },
  };
}

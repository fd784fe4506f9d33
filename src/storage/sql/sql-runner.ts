/**
 * The narrow shape the SQL record modules need from a database connection, so one set of
 * statements serves SQLite and PostgreSQL. Statements use `?` placeholders; the PostgreSQL
 * runner numbers them.
 */
export interface SqlRunner {
  all<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  get<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** Runs a statement and resolves with the number of rows it changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /**
   * A write whose outcome nobody reads (an INSERT of an audit row): it may be sent with the next
   * statement of the transaction, or with its COMMIT, instead of on its own. A failure then fails
   * that statement or the COMMIT, so the transaction still commits all or nothing.
   */
  defer(sql: string, params?: readonly unknown[]): Promise<void>;
}

/** The few places where the two SQL dialects differ. */
export interface SqlDialect {
  /** Appended to a SELECT whose rows this transaction claims: other transactions skip them. */
  readonly skipLocked: string;
  /** Appended to a SELECT whose rows this transaction holds until it ends: others wait for them. */
  readonly forUpdate: string;
  /** A text expression for the string at `path` inside the JSON text column `column`. */
  jsonText(column: string, path: readonly string[]): string;
  /** The database server's clock in Unix ms, as an expression; null when it is this host's. */
  readonly clockMs: string | null;
  /**
   * A statement taking one text parameter that holds a lock on it until the transaction ends,
   * for rows that do not exist yet; null where one writer at a time holds the whole database.
   */
  readonly transactionLock: string | null;
}

export const sqliteDialect: SqlDialect = {
  // One writer at a time: nothing to skip.
  skipLocked: '',
  forUpdate: '',
  // An embedded database: its clock is this daemon's.
  clockMs: null,
  transactionLock: null,
  jsonText: (column, path) => `json_extract(${column}, '$.${path.join('.')}')`,
};

export const postgresDialect: SqlDialect = {
  skipLocked: ' FOR UPDATE SKIP LOCKED',
  forUpdate: ' FOR UPDATE',
  clockMs: '(extract(epoch from clock_timestamp()) * 1000)::bigint',
  transactionLock: 'SELECT pg_advisory_xact_lock(hashtextextended(?, 0))',
  // jsonb (and json's text extraction) cannot hold U+0000, so its JSON escape is dropped first
  // (only a real one: a backslash written as \\ before "u0000" is text, and stays).
  jsonText: (column, path) => `(regexp_replace(${column}, '(?<![\\\\])((?:[\\\\][\\\\])*)[\\\\]u0000', '\\1', 'g')::json #>> '{${path.join(',')}}')`,
};

/** `?, ?, ?` for an IN list of `n` values. */
export function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}

/** A LIKE pattern that matches `text` anywhere, with `\` as the escape character. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

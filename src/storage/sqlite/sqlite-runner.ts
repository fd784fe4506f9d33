import type Database from 'better-sqlite3';
import type { SqlRunner } from '../sql/sql-runner.js';

/**
 * A SqlRunner over one better-sqlite3 connection. Statements are prepared once per SQL text.
 * The calls are synchronous underneath; the promises only give both stores one shape.
 */
export function createSqliteRunner(db: Database.Database): SqlRunner {
  const cache = new Map<string, Database.Statement>();
  const prepare = (sql: string) => {
    let stmt = cache.get(sql);
    if (!stmt) cache.set(sql, (stmt = db.prepare(sql)));
    return stmt;
  };
  // better-sqlite3 refuses undefined; SQL has only NULL.
  const bind = (params: readonly unknown[]) => params.map((p) => (p === undefined ? null : p));
  return {
    async all<T>(sql: string, params: readonly unknown[] = []) {
      return prepare(sql).all(bind(params)) as T[];
    },
    async get<T>(sql: string, params: readonly unknown[] = []) {
      return prepare(sql).get(bind(params)) as T | undefined;
    },
    async run(sql: string, params: readonly unknown[] = []) {
      return prepare(sql).run(bind(params)).changes;
    },
    // A statement costs no round trip here: nothing to gain by waiting.
    async defer(sql: string, params: readonly unknown[] = []) {
      prepare(sql).run(bind(params));
    },
  };
}

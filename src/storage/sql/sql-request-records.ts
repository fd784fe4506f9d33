import type { HandupRequest } from '../../requests/request-schema.js';
import type { AuditEntry, HistoryFilters, ListFilters, NewRequest, RequestRecords, StoredRequest } from '../request-records.js';
import { containsPattern, placeholders, type SqlDialect, type SqlRunner } from './sql-runner.js';

export interface RequestRow {
  id: string;
  format: string;
  submitter: string;
  status: string;
  record: string;
  native_key: string | null;
  native_context: string | null;
  native_reply: string | null;
  resolved_at: number | null;
}

/** The columns a StoredRequest is read from (toStored); native_frame is written, never read back with them. */
export const COLS = 'id, format, submitter, status, record, native_key, native_context, native_reply, resolved_at';

const parse = (s: string | null): unknown => (s === null ? null : JSON.parse(s));
const json = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));

export function toStored(row: RequestRow): StoredRequest {
  return {
    record: JSON.parse(row.record) as HandupRequest,
    format: row.format,
    submitter: row.submitter,
    nativeKey: row.native_key,
    nativeContext: parse(row.native_context),
    nativeReply: parse(row.native_reply),
    resolvedAt: row.resolved_at,
  };
}

const INSERT = `INSERT INTO requests
  (id, format, submitter, status, kind, agent, session, dedupe_key, native_key, content_hash, created_at, expires_at, resolved_at, record, native_frame, native_context, native_reply)
  VALUES (${placeholders(17)})`;

function insertValues(s: NewRequest): unknown[] {
  const r = s.record;
  return [
    r.id,
    s.format,
    s.submitter,
    r.status,
    r.kind,
    r.source.agent,
    r.source.session,
    r.dedupe_key,
    s.nativeKey,
    r.content_hash,
    r.created_at,
    r.expires_at,
    s.resolvedAt,
    JSON.stringify(r),
    json(s.nativeFrame),
    json(s.nativeContext),
    json(s.nativeReply),
  ];
}

function inList(column: string, values: string[] | undefined, where: string[], args: unknown[]) {
  if (!values || values.length === 0) return;
  where.push(`${column} IN (${placeholders(values.length)})`);
  args.push(...values);
}

/** Requests and their audit rows over SQL (table `requests`, `audit`): statements only, no rules. */
export function createSqlRequestRecords(sql: SqlRunner, dialect: SqlDialect): RequestRecords {
  const one = async (text: string, args: readonly unknown[]) => {
    const row = await sql.get<RequestRow>(text, args);
    return row && toStored(row);
  };
  const many = async (text: string, args: readonly unknown[]) => (await sql.all<RequestRow>(text, args)).map(toStored);

  return {
    async insert(s) {
      return (await sql.run(`${INSERT} ON CONFLICT DO NOTHING`, insertValues(s))) === 1;
    },

    // No ON CONFLICT: a taken key fails the statement, and so the transaction.
    add: (s) => sql.defer(INSERT, insertValues(s)),

    get: (id) => one(`SELECT ${COLS} FROM requests WHERE id = ?`, [id]),

    async records(ids) {
      if (ids.length === 0) return [];
      const rows = await sql.all<{ format: string; record: string }>(`SELECT format, record FROM requests WHERE id IN (${placeholders(ids.length)})`, ids);
      return rows.map((r) => ({ format: r.format, record: JSON.parse(r.record) as HandupRequest }));
    },

    async nativeFrame(id) {
      const row = await sql.get<{ native_frame: string | null }>('SELECT native_frame FROM requests WHERE id = ?', [id]);
      return row && parse(row.native_frame);
    },

    findPendingByDedupe: (submitter, dedupeKey) =>
      one(`SELECT ${COLS} FROM requests WHERE submitter = ? AND dedupe_key = ? AND status = 'pending' AND native_key IS NULL`, [submitter, dedupeKey]),

    findByNativeKey: (format, submitter, nativeKey) =>
      one(`SELECT ${COLS} FROM requests WHERE format = ? AND submitter = ? AND native_key = ?`, [format, submitter, nativeKey]),

    // Few requests are pending at once, so the requests_status index serves this without one of its own.
    findPendingBySession: (format, submitter, session) =>
      many(`SELECT ${COLS} FROM requests WHERE status = 'pending' AND format = ? AND submitter = ? AND session = ? ORDER BY id`, [format, submitter, session]),

    async finish(record, resolvedAt) {
      const changed = await sql.run(`UPDATE requests SET status = ?, record = ?, resolved_at = ? WHERE id = ? AND status = 'pending'`, [
        record.status,
        JSON.stringify(record),
        resolvedAt,
        record.id,
      ]);
      return changed === 1;
    },

    async setNativeReply(id, reply) {
      await sql.run('UPDATE requests SET native_reply = ? WHERE id = ?', [json(reply), id]);
    },

    async releaseNativeKey(format, submitter, nativeKey) {
      const changed = await sql.run(`UPDATE requests SET native_key = native_key || '#' || id WHERE format = ? AND submitter = ? AND native_key = ?`, [
        format,
        submitter,
        nativeKey,
      ]);
      return changed === 1;
    },

    async lockSession(format, submitter, session) {
      if (dialect.transactionLock) await sql.all(dialect.transactionLock, [JSON.stringify(['session', format, submitter, session])]);
    },

    claimDue: (now, limit) =>
      many(
        `SELECT ${COLS} FROM requests WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT ?${dialect.skipLocked}`,
        [now, limit],
      ),

    async nextDeadline() {
      const row = await sql.get<{ at: number | null }>(`SELECT MIN(expires_at) AS at FROM requests WHERE status = 'pending' AND expires_at IS NOT NULL`);
      return row?.at ?? null;
    },

    async countPending() {
      // The requests_status index (status, id): a range over the pending rows only.
      const row = await sql.get<{ n: number | string }>(`SELECT COUNT(*) AS n FROM requests WHERE status = 'pending'`);
      return Number(row?.n ?? 0);
    },

    async appendAudit(requestId, event, actor, at, details) {
      await sql.defer('INSERT INTO audit (request_id, event, actor, at, details) VALUES (?, ?, ?, ?, ?)', [requestId, event, actor, at, json(details)]);
    },

    async audit(requestId) {
      const rows = await sql.all<AuditEntry & { details: string | null }>(
        'SELECT id, request_id, event, actor, at, details FROM audit WHERE request_id = ? ORDER BY id',
        [requestId],
      );
      return rows.map((row) => {
        const entry: AuditEntry = { id: row.id, request_id: row.request_id, event: row.event, actor: row.actor, at: row.at };
        if (row.details !== null) entry.details = JSON.parse(row.details);
        return entry;
      });
    },

    list(f: ListFilters) {
      const where: string[] = [];
      const args: unknown[] = [];
      inList('status', f.status, where, args);
      inList('kind', f.kind, where, args);
      inList('format', f.format, where, args);
      inList('agent', f.agent, where, args);
      inList('session', f.session, where, args);
      if (f.submitter) {
        where.push('submitter = ?');
        args.push(f.submitter);
      }
      return many(`SELECT ${COLS} FROM requests ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`, [...args, f.limit]);
    },

    history(f: HistoryFilters) {
      const where = ['resolved_at IS NOT NULL'];
      const args: unknown[] = [];
      if (f.outcome?.includes('auto')) {
        // Outcomes are alternatives: `auto` (no person decided: a rule, auto mode, a decide hook) or any status listed.
        const by = dialect.jsonText('record', ['decision', 'decided_by']);
        const statuses = f.outcome.filter((o) => o !== 'auto');
        const alternatives = [`${by} IN ('rule', 'auto') OR ${by} LIKE 'hook:%'`];
        if (statuses.length) alternatives.push(`status IN (${placeholders(statuses.length)})`);
        where.push(`(${alternatives.join(' OR ')})`);
        args.push(...statuses);
      } else inList('status', f.outcome, where, args);
      inList('kind', f.kind, where, args);
      inList('agent', f.agent, where, args);
      if (f.q) {
        // The pattern is folded by the same lower() as the text, so the exact text always finds
        // itself, whatever the store folds (SQLite: all of Unicode, sqlite-store.ts; PostgreSQL:
        // what the database's locale folds).
        const fields = [['title'], ['summary'], ['source', 'cwd']].map(
          (p) => `lower(coalesce(${dialect.jsonText('record', p)}, '')) LIKE lower(?) ESCAPE '\\'`,
        );
        where.push(`(${fields.join(' OR ')})`);
        const pattern = containsPattern(f.q);
        args.push(pattern, pattern, pattern);
      }
      if (f.before) {
        where.push('(resolved_at < ? OR (resolved_at = ? AND id < ?))');
        args.push(f.before.resolvedAt, f.before.resolvedAt, f.before.id);
      }
      return many(`SELECT ${COLS} FROM requests WHERE ${where.join(' AND ')} ORDER BY resolved_at DESC, id DESC LIMIT ?`, [...args, f.limit]);
    },
  };
}

import type { Db } from '../db/database.js';
import type { HandupRequest, Status } from './request-schema.js';

/** A request as stored: the served record plus the broker metadata kept beside it. */
export interface StoredRequest {
  record: HandupRequest;
  format: string;
  submitter: string;
  nativeKey: string | null;
  nativeFrame: unknown;
  nativeContext: unknown;
  nativeReply: unknown;
  resolvedAt: number | null;
}

interface RequestRow {
  id: string;
  format: string;
  submitter: string;
  status: string;
  record: string;
  native_key: string | null;
  native_frame: string | null;
  native_context: string | null;
  native_reply: string | null;
  resolved_at: number | null;
}

export interface AuditEntry {
  id: number;
  request_id: string;
  event: string;
  actor: string;
  at: number;
  details?: unknown;
}

export interface ListFilters {
  status?: string[] | undefined;
  kind?: string[] | undefined;
  format?: string[] | undefined;
  agent?: string[] | undefined;
  session?: string[] | undefined;
  submitter?: string | undefined;
  limit: number;
}

export interface HistoryFilters {
  outcome?: string[] | undefined;
  kind?: string[] | undefined;
  agent?: string[] | undefined;
  q?: string | undefined;
  before?: { resolvedAt: number; id: string } | undefined;
  limit: number;
}

const parse = (s: string | null): unknown => (s === null ? null : JSON.parse(s));
const json = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));

function toStored(row: RequestRow): StoredRequest {
  return {
    record: JSON.parse(row.record) as HandupRequest,
    format: row.format,
    submitter: row.submitter,
    nativeKey: row.native_key,
    nativeFrame: parse(row.native_frame),
    nativeContext: parse(row.native_context),
    nativeReply: parse(row.native_reply),
    resolvedAt: row.resolved_at,
  };
}

function inList(column: string, values: string[] | undefined, where: string[], args: unknown[]) {
  if (!values || values.length === 0) return;
  where.push(`${column} IN (${values.map(() => '?').join(', ')})`);
  args.push(...values);
}

/** SQL only: no rules, no events. Callers hold the transaction. */
export function createRequestRepository(db: Db) {
  const cols = 'id, format, submitter, status, record, native_key, native_frame, native_context, native_reply, resolved_at';
  const stmts = {
    insert: db.prepare(`INSERT INTO requests
      (id, format, submitter, status, kind, agent, session, dedupe_key, native_key, content_hash, created_at, expires_at, resolved_at, record, native_frame, native_context)
      VALUES (@id, @format, @submitter, @status, @kind, @agent, @session, @dedupe_key, @native_key, @content_hash, @created_at, @expires_at, @resolved_at, @record, @native_frame, @native_context)`),
    byId: db.prepare(`SELECT ${cols} FROM requests WHERE id = ?`),
    pendingByDedupe: db.prepare(
      `SELECT ${cols} FROM requests WHERE submitter = ? AND dedupe_key = ? AND status = 'pending' AND format = 'handup'`,
    ),
    byNativeKey: db.prepare(`SELECT ${cols} FROM requests WHERE format = ? AND submitter = ? AND native_key = ?`),
    // Few requests are pending at once, so the requests_status index serves this without one of its own.
    pendingBySession: db.prepare(
      `SELECT ${cols} FROM requests WHERE status = 'pending' AND format = ? AND submitter = ? AND session = ? ORDER BY id`,
    ),
    finish: db.prepare(
      `UPDATE requests SET status = @status, record = @record, resolved_at = @resolved_at WHERE id = @id AND status = 'pending'`,
    ),
    setReply: db.prepare('UPDATE requests SET native_reply = ? WHERE id = ?'),
    due: db.prepare(
      `SELECT ${cols} FROM requests WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT ?`,
    ),
    nextDeadline: db.prepare(
      `SELECT MIN(expires_at) AS at FROM requests WHERE status = 'pending' AND expires_at IS NOT NULL`,
    ),
    insertAudit: db.prepare('INSERT INTO audit (request_id, event, actor, at, details) VALUES (?, ?, ?, ?, ?)'),
    insertBlobRef: db.prepare('INSERT OR IGNORE INTO blob_refs (hash, request_id) VALUES (?, ?)'),
    audit: db.prepare('SELECT id, request_id, event, actor, at, details FROM audit WHERE request_id = ? ORDER BY id'),
    count: db.prepare('SELECT COUNT(*) AS n FROM requests'),
  };

  return {
    insert(s: StoredRequest): void {
      const r = s.record;
      stmts.insert.run({
        id: r.id,
        format: s.format,
        submitter: s.submitter,
        status: r.status,
        kind: r.kind,
        agent: r.source.agent,
        session: r.source.session,
        dedupe_key: r.dedupe_key,
        native_key: s.nativeKey,
        content_hash: r.content_hash,
        created_at: r.created_at,
        expires_at: r.expires_at,
        resolved_at: s.resolvedAt,
        record: JSON.stringify(r),
        native_frame: json(s.nativeFrame),
        native_context: json(s.nativeContext),
      });
    },

    /** Records that the request names these blobs in its previews, so they are kept with it. */
    insertBlobRefs(requestId: string, hashes: readonly string[]): void {
      for (const hash of hashes) stmts.insertBlobRef.run(hash, requestId);
    },

    get(id: string): StoredRequest | undefined {
      const row = stmts.byId.get(id) as RequestRow | undefined;
      return row && toStored(row);
    },

    findPendingByDedupe(submitter: string, dedupeKey: string): StoredRequest | undefined {
      const row = stmts.pendingByDedupe.get(submitter, dedupeKey) as RequestRow | undefined;
      return row && toStored(row);
    },

    findByNativeKey(format: string, submitter: string, nativeKey: string): StoredRequest | undefined {
      const row = stmts.byNativeKey.get(format, submitter, nativeKey) as RequestRow | undefined;
      return row && toStored(row);
    },

    /** This submitter's pending requests of one format whose `source.session` is `session`, oldest first. */
    findPendingBySession(format: string, submitter: string, session: string): StoredRequest[] {
      return (stmts.pendingBySession.all(format, submitter, session) as RequestRow[]).map(toStored);
    },

    /** Moves a pending request to a terminal state; false when it was no longer pending. */
    finish(record: HandupRequest, resolvedAt: number): boolean {
      const info = stmts.finish.run({ id: record.id, status: record.status, record: JSON.stringify(record), resolved_at: resolvedAt });
      return info.changes === 1;
    },

    setNativeReply(id: string, reply: unknown): void {
      stmts.setReply.run(json(reply), id);
    },

    due(now: number, limit: number): StoredRequest[] {
      return (stmts.due.all(now, limit) as RequestRow[]).map(toStored);
    },

    nextDeadline(): number | null {
      return (stmts.nextDeadline.get() as { at: number | null }).at;
    },

    appendAudit(requestId: string, event: string, actor: string, at: number, details?: unknown): void {
      stmts.insertAudit.run(requestId, event, actor, at, json(details));
    },

    audit(requestId: string): AuditEntry[] {
      return (stmts.audit.all(requestId) as Array<AuditEntry & { details: string | null }>).map((row) => {
        const entry: AuditEntry = { id: row.id, request_id: row.request_id, event: row.event, actor: row.actor, at: row.at };
        if (row.details !== null) entry.details = JSON.parse(row.details);
        return entry;
      });
    },

    list(f: ListFilters): StoredRequest[] {
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
      const sql = `SELECT ${cols} FROM requests ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
      return (db.prepare(sql).all(...args, f.limit) as RequestRow[]).map(toStored);
    },

    history(f: HistoryFilters): StoredRequest[] {
      const where = ['resolved_at IS NOT NULL'];
      const args: unknown[] = [];
      inList('status', f.outcome, where, args);
      inList('kind', f.kind, where, args);
      inList('agent', f.agent, where, args);
      if (f.q) {
        where.push(`(instr(lower(json_extract(record, '$.title')), ?) > 0
          OR instr(lower(coalesce(json_extract(record, '$.summary'), '')), ?) > 0
          OR instr(lower(coalesce(json_extract(record, '$.source.cwd'), '')), ?) > 0)`);
        const q = f.q.toLowerCase();
        args.push(q, q, q);
      }
      if (f.before) {
        where.push('(resolved_at < ? OR (resolved_at = ? AND id < ?))');
        args.push(f.before.resolvedAt, f.before.resolvedAt, f.before.id);
      }
      const sql = `SELECT ${cols} FROM requests WHERE ${where.join(' AND ')} ORDER BY resolved_at DESC, id DESC LIMIT ?`;
      return (db.prepare(sql).all(...args, f.limit) as RequestRow[]).map(toStored);
    },

    count(): number {
      return (stmts.count.get() as { n: number }).n;
    },
  };
}

export type RequestRepository = ReturnType<typeof createRequestRepository>;
export type { Status };

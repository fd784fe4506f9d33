import type { Logger } from 'pino';
import type { PolicyRecords } from '../storage/policy-records.js';
import type { RequestRecords, StoredRequest } from '../storage/request-records.js';
import type { Store, WriteOptions, WriteTx } from '../storage/store.js';

/** What a line names about the request besides its id. */
interface RequestContext {
  format: string;
  kind: string;
  agent: string | null;
}

interface AuditRow {
  requestId: string | null;
  event: string;
  actor: string;
  subject?: string | null;
  details: unknown;
}

/** Message and level per audit event; others are logged at info as `request <event>`. */
const LINES: Record<string, { msg: string; level?: 'warn' }> = {
  created: { msg: 'request created' },
  decided: { msg: 'request decided' },
  expired: { msg: 'request expired' },
  cancelled: { msg: 'request cancelled' },
  superseded: { msg: 'request superseded' },
  'rule.skipped': { msg: 'rule skipped' },
  'hook.failed': { msg: 'decide hook failed', level: 'warn' },
  'callback.delivered': { msg: 'callback delivered' },
  'callback.failed': { msg: 'callback failed', level: 'warn' },
  'reply.render_failed': { msg: 'native reply not rendered', level: 'warn' },
  'reply.feedback_not_sent': { msg: 'feedback left out of the native reply' },
  'rule.added': { msg: 'rule added' },
  'rule.removed': { msg: 'rule removed' },
  'rule.expired': { msg: 'rule expired' },
  'auto.changed': { msg: 'auto mode changed' },
};

/**
 * Audit details that go on the line: ids, outcomes and the daemon's own reasons. Free text
 * (feedback, error messages that may quote a URL, notes, the reason a person gave for auto
 * mode) and whole rules stay in the audit trail, which is behind the admin token; a log is read
 * by more people and kept in more places.
 */
const REQUEST_DETAILS = [
  'option',
  'outcome',
  'rule_id',
  'scope',
  'mode',
  'on_timeout',
  'superseded_by',
  'reason',
  'hook',
  'delivery_id',
  'type',
  'attempts',
  'status',
];
const POLICY_DETAILS = ['mode', 'until', 'previous', 'expires_at'];

function pick(details: unknown, keys: string[]): Record<string, unknown> {
  if (typeof details !== 'object' || details === null) return {};
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const v = (details as Record<string, unknown>)[key];
    if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[key] = v;
  }
  return out;
}

const contextOf = (s: StoredRequest): RequestContext => ({ format: s.format, kind: s.record.kind, agent: s.record.source.agent ?? null });

/**
 * One structured line per lifecycle event (created, decided with its actor, expired, cancelled,
 * superseded, callback delivered/failed, rule and decide-hook outcomes, policy changes), from
 * the one place every such event is written: the audit rows a transaction appends. Lines are
 * written after the commit, in order, never for a rolled-back transaction, and only by the
 * daemon that made the change (others hear of it, they do not log it again). The request's
 * format, kind and agent come from the rows the transaction itself read or wrote; for the few
 * events whose transaction did not (a callback outcome, a decide hook failure) they are read
 * once after the commit.
 */
export function logLifecycle(store: Store, log: Logger): Store {
  const lineOf = (row: AuditRow) => LINES[row.event] ?? { msg: `request ${row.event}` };

  function write(rows: AuditRow[], known: Map<string, RequestContext>) {
    for (const row of rows) {
      const line = lineOf(row);
      const about =
        row.requestId === null
          ? { rule_id: row.subject ?? undefined, actor: row.actor, ...pick(row.details, POLICY_DETAILS) }
          : { request_id: row.requestId, ...known.get(row.requestId), actor: row.actor, ...pick(row.details, REQUEST_DETAILS) };
      log[line.level ?? 'info']({ event: row.event, ...about }, line.msg);
    }
  }

  function flush(all: AuditRow[], known: Map<string, RequestContext>) {
    // At a level that drops these lines, nothing is read for them either.
    const rows = all.filter((row) => log.isLevelEnabled(lineOf(row).level ?? 'info'));
    const missing = [...new Set(rows.flatMap((r) => (r.requestId !== null && !known.has(r.requestId) ? [r.requestId] : [])))];
    if (missing.length === 0) return write(rows, known);
    void Promise.all(
      missing.map(async (id) => {
        const stored = await store.requests.get(id);
        if (stored) known.set(id, contextOf(stored));
      }),
    )
      .catch(() => undefined)
      // A line without its format beats no line when the read fails.
      .then(() => write(rows, known));
  }

  return {
    ...store,
    write<T>(work: (tx: WriteTx) => Promise<T>, options?: WriteOptions): Promise<T> {
      return store.write((tx) => {
        const known = new Map<string, RequestContext>();
        const rows: AuditRow[] = [];
        const append = (row: AuditRow) => {
          if (rows.length === 0) tx.afterCommit(() => flush(rows, known));
          rows.push(row);
        };
        return work({ ...tx, requests: watchRequests(tx.requests, known, append), policy: watchPolicy(tx.policy, append) });
      }, options);
    },
  };
}

/** The transaction's request records, noting each request they hand over and each audit row. */
function watchRequests(records: RequestRecords, known: Map<string, RequestContext>, append: (row: AuditRow) => void): RequestRecords {
  const one = (s: StoredRequest | undefined) => {
    if (s) known.set(s.record.id, contextOf(s));
    return s;
  };
  const many = (list: StoredRequest[]) => {
    for (const s of list) one(s);
    return list;
  };
  return {
    ...records,
    get: async (id) => one(await records.get(id)),
    findByNativeKey: async (format, submitter, key) => one(await records.findByNativeKey(format, submitter, key)),
    findPendingByDedupe: async (submitter, key) => one(await records.findPendingByDedupe(submitter, key)),
    findPendingBySession: async (format, submitter, session) => many(await records.findPendingBySession(format, submitter, session)),
    claimDue: async (now, limit) => many(await records.claimDue(now, limit)),
    async insert(stored) {
      const inserted = await records.insert(stored);
      if (inserted) one(stored);
      return inserted;
    },
    async add(stored) {
      await records.add(stored);
      one(stored);
    },
    async appendAudit(requestId, event, actor, at, details) {
      await records.appendAudit(requestId, event, actor, at, details);
      append({ requestId, event, actor, details });
    },
  };
}

function watchPolicy(records: PolicyRecords, append: (row: AuditRow) => void): PolicyRecords {
  return {
    ...records,
    async appendAudit(event, actor, at, subject, details) {
      await records.appendAudit(event, actor, at, subject, details);
      append({ requestId: null, event, actor, subject, details });
    },
  };
}

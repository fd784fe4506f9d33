import type { Principal } from '../auth/principal.js';
import { actorName, submitterKey } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { writeTransaction, type Db } from '../db/database.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { contentHash } from './content-hash.js';
import { decide, timeoutDecision } from './decision-rules.js';
import { previewBlobs } from './preview-blobs.js';
import type { RequestDraft } from './request-draft.js';
import type { RequestEvents, RequestEventType } from './request-events.js';
import type { HistoryFilters, ListFilters, RequestRepository, StoredRequest } from './request-repository.js';
import type { Decision, DecisionBody, HandupRequest, Status } from './request-schema.js';

export type TerminalEventType = Exclude<RequestEventType, 'request.created'>;

/** A terminal transition, handed to hooks inside the transaction that commits it. */
export interface TerminalTransition {
  stored: StoredRequest;
  type: TerminalEventType;
  at: number;
  /** Who caused it (the audit actor): a principal's name, `timeout` or `upstream`. */
  actor: string;
}

/**
 * Runs inside the write transaction of every terminal transition (decision, expiry, cancel,
 * upstream resolution). Whatever a hook writes commits or rolls back with the transition:
 * this is where the native reply is rendered and the callback outbox row is written.
 */
export type TerminalHook = (transition: TerminalTransition) => void;

/**
 * Runs on a reviewer's decision before it is stored, with the request as it would be once
 * decided; throwing (AppError 'invalid_decision') refuses the decision and stores nothing.
 */
export type DecisionCheck = (decided: StoredRequest) => void;

/** Pending requests a new one ends on arrival: same submitter, format and `source.session`. */
export interface Supersede {
  /** Whether the new request supersedes this older pending one. */
  matches(older: StoredRequest): boolean;
  /** Audit actor of the `superseded` rows (no native reply is sent for them). */
  actor: string;
  /** Audit details; `superseded_by` (the new request's id) is added. */
  details?: Record<string, unknown>;
}

export interface NativeOrigin {
  /** Permanent key derived from native ids; a re-sent frame maps to the same record. */
  key: string;
  frame: unknown;
  context: unknown;
  /** The adapter's notes about the frame, kept in the `created` audit row. */
  notes?: string[];
}

export interface CreateOptions {
  principal: Principal;
  format?: string;
  native?: NativeOrigin;
  supersede?: Supersede;
}

export interface UpstreamResolution {
  status: Exclude<Status, 'pending'>;
  decision: Decision | null;
  actor: string;
  details?: unknown;
}

export interface RequestServiceDeps {
  db: Db;
  repo: RequestRepository;
  clock: Clock;
  events: RequestEvents;
  terminalHooks?: TerminalHook[];
  decisionChecks?: DecisionCheck[];
  /**
   * Defers a callback until the surrounding write has committed (see db/write-batcher.ts).
   * Default: run at once, which is right when every write commits on its own.
   */
  afterCommit?: (cb: () => void) => void;
}

const EXPIRY_BATCH = 500;

export function createRequestService({ db, repo, clock, events, terminalHooks = [], decisionChecks = [], afterCommit = (cb) => cb() }: RequestServiceDeps) {
  function visible(id: string, principal: Principal): StoredRequest {
    const stored = repo.get(id);
    // Someone else's request is indistinguishable from a missing one (product.md §5).
    if (!stored || (principal.kind === 'submit' && stored.submitter !== submitterKey(principal))) {
      throw new AppError('not_found', `request ${id} not found`);
    }
    return stored;
  }

  // Listeners (waiters, the events hub, the callback worker) only ever hear committed changes.
  function emit(type: RequestEventType, stored: StoredRequest) {
    afterCommit(() => events.emit({ type, request: stored.record, format: stored.format }));
  }

  /** The one path every terminal transition takes: conditional update, audit, hooks, one transaction. */
  function finish(
    stored: StoredRequest,
    next: { status: Exclude<Status, 'pending'>; decision: Decision | null },
    type: TerminalEventType,
    audit: { event: string; actor: string; details?: unknown },
    at: number,
  ): StoredRequest {
    const record: HandupRequest = { ...stored.record, status: next.status, decision: next.decision };
    const updated: StoredRequest = { ...stored, record, resolvedAt: at };
    if (!repo.finish(record, at)) {
      throw new AppError('not_pending', `request ${record.id} is no longer pending`);
    }
    repo.appendAudit(record.id, audit.event, audit.actor, at, audit.details);
    for (const hook of terminalHooks) hook({ stored: updated, type, at, actor: audit.actor });
    if (updated.nativeReply !== stored.nativeReply) repo.setNativeReply(record.id, updated.nativeReply);
    return updated;
  }

  function pendingOrThrow(stored: StoredRequest) {
    if (stored.record.status !== 'pending') {
      throw new AppError('not_pending', `request ${stored.record.id} is already ${stored.record.status}`, {
        status: stored.record.status,
      });
    }
  }

  return {
    /** Creates a request, or returns the existing one on a dedupe hit or a replayed native frame. */
    create(draft: RequestDraft, { principal, format = 'handup', native, supersede }: CreateOptions): { stored: StoredRequest; created: boolean } {
      const submitter = submitterKey(principal);
      const { timeoutMs, ...fields } = draft;
      const result = writeTransaction(db, () => {
        const now = clock.now();
        const hash = contentHash(fields);
        if (native) {
          const existing = repo.findByNativeKey(format, submitter, native.key);
          if (existing) {
            // A replay maps to its record only when it asks the same thing: the reviewer decided
            // on that content, so a frame with other content must never get the old decision
            // (issue 10). Envelope fields (sequence numbers, timestamps) are not in the hash.
            if (existing.record.content_hash === hash) return { stored: existing, created: false };
            throw new AppError(
              'native_conflict',
              `native key "${native.key}" is already used by request ${existing.record.id} with different content`,
              { existing_id: existing.record.id },
            );
          }
        } else if (fields.dedupe_key !== null) {
          const existing = repo.findPendingByDedupe(submitter, fields.dedupe_key);
          if (existing) {
            if (existing.record.content_hash === hash) return { stored: existing, created: false };
            throw new AppError(
              'dedupe_conflict',
              `dedupe_key "${fields.dedupe_key}" is already used by pending request ${existing.record.id} with different content`,
              { existing_id: existing.record.id },
            );
          }
        }
        const record: HandupRequest = {
          id: newId(now),
          ...fields,
          status: 'pending',
          content_hash: hash,
          created_at: now,
          expires_at: timeoutMs === null ? null : now + timeoutMs,
          decision: null,
        };
        const stored: StoredRequest = {
          record,
          format,
          submitter,
          nativeKey: native?.key ?? null,
          nativeFrame: native?.frame ?? null,
          nativeContext: native?.context ?? null,
          nativeReply: null,
          resolvedAt: null,
        };
        repo.insert(stored);
        repo.insertBlobRefs(record.id, previewBlobs(record.previews));
        const notes = native?.notes?.length ? { notes: native.notes } : {};
        repo.appendAudit(record.id, 'created', actorName(principal), now, format === 'handup' ? undefined : { format, ...notes });
        const superseded: StoredRequest[] = [];
        if (supersede && record.source.session !== null) {
          for (const older of repo.findPendingBySession(format, submitter, record.source.session)) {
            if (older.record.id === record.id || !supersede.matches(older)) continue;
            const audit = { event: 'superseded', actor: supersede.actor, details: { ...supersede.details, superseded_by: record.id } };
            superseded.push(finish(older, { status: 'cancelled', decision: null }, 'request.cancelled', audit, now));
          }
        }
        return { stored, created: true, superseded };
      });
      if (result.created) emit('request.created', result.stored);
      for (const older of result.superseded ?? []) emit('request.cancelled', older);
      return { stored: result.stored, created: result.created };
    },

    get(id: string, principal: Principal): StoredRequest {
      return visible(id, principal);
    },

    decide(id: string, body: DecisionBody, principal: Principal): StoredRequest {
      const updated = writeTransaction(db, () => {
        const stored = visible(id, principal);
        pendingOrThrow(stored);
        const at = clock.now();
        const by = actorName(principal);
        const next = decide(stored.record, body, { decidedBy: by, decidedAt: at });
        for (const check of decisionChecks) check({ ...stored, record: { ...stored.record, ...next } });
        const details: Record<string, unknown> = { option: next.decision.option, outcome: next.decision.outcome };
        if (next.decision.feedback) details.feedback = next.decision.feedback;
        if (next.decision.scope) details.scope = next.decision.scope;
        return finish(stored, next, 'request.decided', { event: 'decided', actor: by, details }, at);
      });
      emit('request.decided', updated);
      return updated;
    },

    cancel(id: string, principal: Principal): StoredRequest {
      const updated = writeTransaction(db, () => {
        const stored = visible(id, principal);
        pendingOrThrow(stored);
        const at = clock.now();
        return finish(stored, { status: 'cancelled', decision: null }, 'request.cancelled', { event: 'cancelled', actor: actorName(principal) }, at);
      });
      emit('request.cancelled', updated);
      return updated;
    },

    /**
     * Applies a native follow-up frame (resolved elsewhere, cancelled, expired). A terminal
     * request is never overwritten: the caller gets the stored one back with `changed: false`.
     */
    resolveUpstream(id: string, resolution: UpstreamResolution): { stored: StoredRequest; changed: boolean } {
      const type: TerminalEventType =
        resolution.status === 'cancelled' ? 'request.cancelled' : resolution.status === 'expired' ? 'request.expired' : 'request.decided';
      const result = writeTransaction(db, () => {
        const stored = repo.get(id);
        if (!stored) throw new AppError('not_found', `request ${id} not found`);
        if (stored.record.status !== 'pending') return { stored, changed: false };
        const at = clock.now();
        const event = type === 'request.decided' ? 'decided' : resolution.status;
        const updated = finish(stored, resolution, type, { event, actor: resolution.actor, details: resolution.details }, at);
        return { stored: updated, changed: true };
      });
      if (result.changed) emit(type, result.stored);
      return result;
    },

    /** Expires everything due at `now`, each exactly once (the UPDATE is conditional on pending). */
    expireDue(): StoredRequest[] {
      const expired: StoredRequest[] = [];
      for (;;) {
        const batch = writeTransaction(db, () => {
          const now = clock.now();
          const out: StoredRequest[] = [];
          for (const stored of repo.due(now, EXPIRY_BATCH)) {
            const decision = timeoutDecision(stored.record, now);
            const details = decision ? { on_timeout: stored.record.on_timeout, option: decision.option } : { on_timeout: stored.record.on_timeout };
            out.push(finish(stored, { status: 'expired', decision }, 'request.expired', { event: 'expired', actor: 'timeout', details }, now));
          }
          return out;
        });
        for (const stored of batch) emit('request.expired', stored);
        expired.push(...batch);
        if (batch.length < EXPIRY_BATCH) return expired;
      }
    },

    nextDeadline(): number | null {
      return repo.nextDeadline();
    },

    list(filters: ListFilters): StoredRequest[] {
      return repo.list(filters);
    },

    history(filters: HistoryFilters): StoredRequest[] {
      return repo.history(filters);
    },

    audit(id: string, principal: Principal) {
      visible(id, principal);
      return repo.audit(id);
    },

    /** For native formats: the stored request behind a native key, if this submitter sent it. */
    findByNativeKey(format: string, principal: Principal, key: string): StoredRequest | undefined {
      return repo.findByNativeKey(format, submitterKey(principal), key);
    },

    /** For native formats: this submitter's pending requests of one native session (`source.session`), oldest first. */
    findPendingBySession(format: string, principal: Principal, session: string): StoredRequest[] {
      return repo.findPendingBySession(format, submitterKey(principal), session);
    },
  };
}

export type RequestService = ReturnType<typeof createRequestService>;

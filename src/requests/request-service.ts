import type { Principal } from '../auth/principal.js';
import { actorName, submitterKey } from '../auth/principal.js';
import type { Clock } from '../lib/clock.js';
import { parseDuration } from '../lib/durations.js';
import { canonicalJson } from '../lib/canonical-json.js';
import { AppError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { CreationVerdict } from '../policy/creation-verdict.js';
import type { Scope } from '../policy/scope-rule.js';
import { RequestKeyTaken, type HistoryFilters, type ListFilters, type NewRequest, type RequestReads, type StoredRequest } from '../storage/request-records.js';
import type { Store, WriteTx } from '../storage/store.js';
import { contentHash, sameContentHash } from './content-hash.js';
import { decide, timeoutDecision, unattendedView } from './decision-rules.js';
import { previewBlobs } from './preview-blobs.js';
import type { RequestDraft } from './request-draft.js';
import type { RequestEvents, RequestEventType } from './request-events.js';
import type { ArrivalHook, CreatedHook, CreationPolicy, DecisionCheck, ScopedAllow, Supersede, TerminalEventType, TerminalHook } from './request-hooks.js';
import type { Decision, DecisionBody, HandupRequest, Status } from './request-schema.js';

export interface NativeOrigin {
  /** Permanent key derived from native ids; a re-sent frame maps to the same record. */
  key: string;
  frame: unknown;
  context: unknown;
  /** The adapter's notes about the frame, kept in the `created` audit row. */
  notes?: string[];
  /** What of a context a replay must repeat (WireAdapter.replayContext); all of it when absent. */
  replayContext?: (context: unknown) => unknown;
  /** Option ids only a person may choose (Normalized.personOnly). */
  personOnly?: readonly string[];
  /** Whether a stored frame, read as this frame is read now, asks the same (an earlier version's record). */
  asksAsStored?: (storedFrame: unknown) => boolean;
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
  store: Store;
  clock: Clock;
  events: RequestEvents;
  terminalHooks?: TerminalHook[];
  decisionChecks?: DecisionCheck[];
  arrivalHooks?: ArrivalHook[];
  createdHooks?: CreatedHook[];
  policy?: CreationPolicy;
  scopedAllow?: ScopedAllow;
}

const EXPIRY_BATCH = 500;

export function createRequestService({
  store,
  clock,
  events,
  terminalHooks = [],
  decisionChecks = [],
  arrivalHooks = [],
  createdHooks = [],
  policy,
  scopedAllow,
}: RequestServiceDeps) {
  function ownedOrMissing(stored: StoredRequest | undefined, id: string, principal: Principal): StoredRequest {
    // Someone else's request is indistinguishable from a missing one.
    if (!stored || (principal.kind === 'submit' && stored.submitter !== submitterKey(principal))) {
      throw new AppError('not_found', `request ${id} not found`);
    }
    return stored;
  }

  /**
   * Listeners in this daemon (waiters, the events hub, the callback worker) hear a change once it
   * has committed; the other daemons on the store hear of it through the store.
   */
  function emit(tx: WriteTx, type: RequestEventType, stored: StoredRequest) {
    tx.announce({ type, requestId: stored.record.id });
    tx.afterCommit(() => events.emit({ type, request: stored.record, format: stored.format }));
  }

  /** The one path every terminal transition takes: conditional update, audit, hooks, one transaction. */
  async function finish(
    tx: WriteTx,
    stored: StoredRequest,
    next: { status: Exclude<Status, 'pending'>; decision: Decision | null },
    type: TerminalEventType,
    audit: { event: string; actor: string; details?: unknown },
    at: number,
  ): Promise<StoredRequest> {
    const record: HandupRequest = { ...stored.record, status: next.status, decision: next.decision };
    const updated: StoredRequest = { ...stored, record, resolvedAt: at };
    // Conditional on pending: whichever writer (or daemon) comes second changes nothing.
    if (!(await tx.requests.finish(record, at))) {
      throw new AppError('not_pending', `request ${record.id} is no longer pending`);
    }
    await tx.requests.appendAudit(record.id, audit.event, audit.actor, at, audit.details);
    const now = Math.max(at, clock.now());
    for (const hook of terminalHooks) await hook({ stored: updated, type, at, now, actor: audit.actor }, tx);
    if (updated.nativeReply !== stored.nativeReply) await tx.requests.setNativeReply(record.id, updated.nativeReply);
    emit(tx, type, updated);
    return updated;
  }

  /**
   * The one decision path of reviewers, decide hooks and decision links: the protocol's checks,
   * scoped allow, finish. `extra` joins the audit row.
   */
  async function decideIn(tx: WriteTx, stored: StoredRequest, body: DecisionBody, by: string, extra?: Record<string, unknown>): Promise<StoredRequest> {
    const at = clock.now();
    pendingOrThrow(stored, at);
    const next = decide(stored.record, body, { decidedBy: by, decidedAt: at });
    for (const check of decisionChecks) check({ ...stored, record: { ...stored.record, ...next } });
    const details: Record<string, unknown> = { option: next.decision.option, outcome: next.decision.outcome };
    if (next.decision.feedback) details.feedback = next.decision.feedback;
    if (next.decision.scope) {
      details.scope = next.decision.scope;
      const ruleId = scopedAllow ? await scopedAllow(tx, stored, next.decision.scope as Scope, by, at) : null;
      if (ruleId !== null) details.rule_id = next.decision.rule_id = ruleId;
      else if (scopedAllow) details.native_grant = true;
    }
    return finish(tx, stored, next, 'request.decided', { event: 'decided', actor: by, details: { ...details, ...extra } }, at);
  }

  /** Expires a request past its deadline, recorded at the deadline however late (a busy loop, a daemon that was down). */
  function expireIn(tx: WriteTx, stored: StoredRequest, now: number): Promise<StoredRequest> {
    const at = Math.min(stored.record.expires_at ?? now, now);
    const decision = timeoutDecision(stored.record, at);
    const details = decision ? { on_timeout: stored.record.on_timeout, option: decision.option } : { on_timeout: stored.record.on_timeout };
    return finish(tx, stored, { status: 'expired', decision }, 'request.expired', { event: 'expired', actor: 'timeout', details }, at);
  }

  /**
   * A request past its `expires_at` is expired, even in the moment before the expiry sweep has
   * written so: a decision or a cancel arriving then must not win over the timeout.
   */
  function pendingOrThrow(stored: StoredRequest, now: number) {
    const { status, expires_at: expiresAt } = stored.record;
    const effective = status === 'pending' && expiresAt !== null && expiresAt <= now ? 'expired' : status;
    if (effective !== 'pending') {
      throw new AppError('not_pending', `request ${stored.record.id} is already ${effective}`, { status: effective });
    }
  }

  /**
   * A pending request past its deadline that the expiry sweep has not reached yet (the moments
   * after a start, when everything that came due while the daemon was down is being expired).
   */
  const overdue = (stored: StoredRequest, now: number) =>
    stored.record.status === 'pending' && stored.record.expires_at !== null && stored.record.expires_at <= now;

  /**
   * The request a replayed native frame or a dedupe key names, if any, read `from` the store
   * (committed data) or a write transaction; throws on a dedupe conflict.
   */
  async function existing(
    from: { requests: RequestReads },
    submitter: string,
    format: string,
    hash: string,
    draft: Omit<RequestDraft, 'timeoutMs'>,
    native: NativeOrigin | undefined,
  ) {
    if (native) {
      const found = await from.requests.findByNativeKey(format, submitter, native.key);
      // A replay maps to its record only when it asks the same thing: the reviewer decided on
      // that content, so a frame with other content must never get the old decision.
      // What the reply is rendered from counts too (option ids behind the labels, a turn id,
      // answer checks), since the old reply would answer a frame that no longer asks it.
      // Envelope fields (sequence numbers, timestamps) are in neither, nor is the order of the
      // keys of an object the adapter showed as a JSON preview.
      // And what a rule can match besides (tool, agent, session, cwd, repo): a rule's decision
      // must not carry over to a tool or a place it never matched.
      const asked = native.replayContext ?? ((c: unknown) => c);
      if (
        found &&
        ((found.record.content_hash !== hash && sameContentHash(found.record) !== sameContentHash(draft)) ||
          canonicalJson(matchable(found.record)) !== canonicalJson(matchable(draft)) ||
          canonicalJson(asked(found.nativeContext)) !== canonicalJson(asked(native.context))) &&
        // A record an earlier version made from this same frame (read differently then) is still its
        // record, sent with the same query: the stored frame is read with this one's, so what the
        // query gave the record (a callback, a repo) must be what it holds.
        !(
          found.record.callback_url === draft.callback_url &&
          canonicalJson(matchable(found.record).slice(1)) === canonicalJson(matchable(draft).slice(1)) &&
          native.asksAsStored?.(await from.requests.nativeFrame(found.record.id))
        )
      ) {
        throw new AppError('native_conflict', `native key "${native.key}" is already used by request ${found.record.id} with different content`, {
          existing_id: found.record.id,
        });
      }
      return found;
    }
    if (draft.dedupe_key === null) return undefined;
    const found = await from.requests.findPendingByDedupe(submitter, draft.dedupe_key);
    // An overdue request holds its key no longer: the caller expires it and creates anew.
    if (found && overdue(found, clock.now())) return found;
    if (found && found.record.content_hash !== hash && sameContentHash(found.record) !== sameContentHash(draft)) {
      throw new AppError('dedupe_conflict', `dedupe_key "${draft.dedupe_key}" is already used by pending request ${found.record.id} with different content`, {
        existing_id: found.record.id,
      });
    }
    return found;
  }

  return {
    /** Creates a request, or returns the existing one on a dedupe hit or a replayed native frame. */
    async create(
      draft: RequestDraft,
      { principal, format = 'handup', native, supersede }: CreateOptions,
    ): Promise<{ stored: StoredRequest; created: boolean; replyStale?: true }> {
      const submitter = submitterKey(principal);
      const { timeoutMs, ...fields } = draft;
      const hash = contentHash(fields);
      // A replay (a re-sent native frame, a pending dedupe key) is answered from committed state,
      // without a write transaction: it writes nothing, so it waits for no commit.
      const seen = await existing(store, submitter, format, hash, fields, native);
      if (seen && !overdue(seen, clock.now())) return replayed(store, seen);
      try {
        // An overdue one is expired in the write transaction first (createIn, unchecked).
        return await store.write((tx) => createIn(tx, { checked: !seen }));
      } catch (err) {
        if (!(err instanceof RequestKeyTaken)) throw err;
        // Someone committed the same key since the read above: start again inside the transaction.
        return store.write((tx) => createIn(tx, { checked: false }));
      }

      /**
       * A replay's answer. Its stored reply is stale when a rival the adapter supersedes by (a
       * newer plan of the session) is pending: Ask's `plan/approve` names no plan, and the host
       * would apply the old approval to the newest plan, which no reviewer approved.
       */
      async function replayed(from: { requests: RequestReads }, found: StoredRequest): Promise<{ stored: StoredRequest; created: false; replyStale?: true }> {
        const session = found.record.source.session;
        if (!supersede || found.record.status === 'pending' || found.nativeReply == null || session === null) return { stored: found, created: false };
        const pending = await from.requests.findPendingBySession(format, submitter, session);
        const rival = pending.some((p) => p.record.id !== found.record.id && (supersede.matches(p) || supersede.refusedBy?.(p) !== undefined));
        return rival ? { stored: found, created: false, replyStale: true } : { stored: found, created: false };
      }

      async function createIn(tx: WriteTx, { checked }: { checked: boolean }): Promise<{ stored: StoredRequest; created: boolean; replyStale?: true }> {
        if (!checked) {
          let found = await existing(tx, submitter, format, hash, fields, native);
          if (found && overdue(found, clock.now())) {
            // Expired here rather than answered as pending: an agent retrying with its dedupe key
            // after an outage gets a new request, not one about to expire, and a re-sent native
            // frame gets its record's timeout. Another daemon may be expiring it this moment.
            try {
              const expired = await expireIn(tx, found, clock.now());
              found = native ? expired : undefined;
            } catch (err) {
              if (!(err instanceof AppError && err.code === 'not_pending')) throw err;
              found = await existing(tx, submitter, format, hash, fields, native);
            }
          }
          if (found) return replayed(tx, found);
        }
        const session = fields.source.session;
        // Another daemon creating in this session now would miss this request, and this one
        // would miss it: both could stay pending. One at a time, each sees the other.
        if (supersede && session !== null) await tx.requests.lockSession(format, submitter, session);
        if (supersede?.refusedBy && session !== null) {
          for (const pending of await tx.requests.findPendingBySession(format, submitter, session)) {
            const refusal = supersede.refusedBy(pending);
            if (!refusal) continue;
            // The key may have been taken since the lookup before this transaction: a replay.
            const found = checked ? await existing(tx, submitter, format, hash, fields, native) : undefined;
            if (found) return replayed(tx, found);
            throw refusal;
          }
        }
        const now = clock.now();
        let record: HandupRequest = {
          id: newId(now),
          ...fields,
          status: 'pending',
          content_hash: hash,
          created_at: now,
          expires_at: timeoutMs === null ? null : now + timeoutMs,
          decision: null,
        };
        const personOnly = native?.personOnly ?? [];
        const verdict: CreationVerdict = policy ? await policy.verdict(tx, record, format, now, personOnly) : { type: 'none' };
        if (verdict.type === 'rule' && verdict.outcome.type === 'ask') record = askOverrides(record, verdict.outcome, now);
        // What a deny rule matched but cannot decide waits for a person: no decide hook sees it
        // (forPerson below), and its own on_timeout must not approve it when nobody came.
        const heldForPerson = verdict.type === 'rule' && verdict.outcome.type === 'skip' && verdict.rule.action === 'deny';
        if (heldForPerson && record.on_timeout === 'approve') record = { ...record, on_timeout: 'expire' };
        // Nor may the clock approve with an option only a person may choose.
        const timeoutWide =
          record.on_timeout === 'approve' &&
          !heldForPerson &&
          personOnly.length > 0 &&
          !unattendedView(record, personOnly).options.some((o) => o.outcome === 'approve');
        if (timeoutWide) record = { ...record, on_timeout: 'expire' };
        const stored: StoredRequest = {
          record,
          format,
          submitter,
          nativeKey: native?.key ?? null,
          nativeContext: native?.context ?? null,
          nativeReply: null,
          resolvedAt: null,
        };
        const row: NewRequest = { ...stored, nativeFrame: native?.frame ?? null };
        if (checked) {
          // The key was free a moment ago. If a write (here or on another daemon) took it
          // since, this write fails as a whole with RequestKeyTaken, nothing of it stays (a
          // rule's hit), and create() starts again with the lookup inside the transaction.
          await tx.requests.add(row);
        } else if (!(await tx.requests.insert(row))) {
          // Taken between the lookup in this transaction and the insert, by another daemon
          // that has committed: answer with its request, as for any replay.
          const winner = await existing(tx, submitter, format, hash, fields, native);
          if (winner) return replayed(tx, winner);
          throw new Error(`request ${record.id} collided with a request that is gone`);
        }
        await tx.blobs.addRefs(record.id, previewBlobs(record.previews));
        const notes = native?.notes?.length ? { notes: native.notes } : {};
        // An ask rule that raised the risk: the risk as sent is kept, since that is what rules
        // match at creation, and what a simulation over history must match too.
        const raised = record.risk !== fields.risk ? { risk_sent: fields.risk } : {};
        const asked = verdict.type === 'rule' && verdict.outcome.type === 'ask' ? { rule_id: verdict.rule.id, action: 'ask', ...raised } : {};
        const wide = timeoutWide ? { on_timeout_sent: 'approve' } : {};
        // Kept for the history simulation, which must not let a rule take what only a person may.
        const personal = personOnly.length > 0 ? { person_only: personOnly } : {};
        const details =
          format === 'handup' && !('rule_id' in asked) ? undefined : { ...(format === 'handup' ? {} : { format }), ...notes, ...asked, ...wide, ...personal };
        await tx.requests.appendAudit(record.id, 'created', actorName(principal), now, details);
        if (verdict.type === 'rule') await policy!.hit(tx, verdict.rule.id, now);
        // `request.created` carries the final record (a request decided here is created decided),
        // heard before the decision event.
        let final = stored;
        tx.announce({ type: 'request.created', requestId: record.id });
        const forPerson = heldForPerson ? { forPerson: true as const } : {};
        const onlyPerson = personOnly.length > 0 ? { personOnly } : {};
        tx.afterCommit(() => events.emit({ type: 'request.created', request: final.record, format, ...forPerson, ...onlyPerson }));
        if (verdict.type === 'rule' && verdict.outcome.type === 'skip') {
          await tx.requests.appendAudit(record.id, 'rule.skipped', `rule:${verdict.rule.id}`, now, {
            rule_id: verdict.rule.id,
            reason: verdict.outcome.reason,
            ...(record.on_timeout !== fields.on_timeout ? { on_timeout_sent: fields.on_timeout } : {}),
          });
        } else if (verdict.type === 'auto' || (verdict.type === 'rule' && verdict.outcome.type === 'decide')) {
          // Decided in the creating transaction, through the path every decision takes (native
          // reply, callback outbox): the create call answers with the terminal record.
          const next = verdict.type === 'auto' ? verdict : (verdict.outcome as Extract<typeof verdict.outcome, { type: 'decide' }>);
          const actor = verdict.type === 'auto' ? 'auto' : `rule:${verdict.rule.id}`;
          const details: Record<string, unknown> = { option: next.decision.option, outcome: next.decision.outcome };
          if (verdict.type === 'rule') details.rule_id = verdict.rule.id;
          else details.mode = verdict.mode;
          if (next.decision.feedback) details.feedback = next.decision.feedback;
          final = await finish(tx, stored, { status: next.status, decision: next.decision }, 'request.decided', { event: 'decided', actor, details }, now);
        } else if (verdict.type === 'none') {
          // No rule matched: a mute may still dismiss a notice on arrival.
          for (const hook of arrivalHooks) {
            const ended = await hook(stored, tx, now);
            if (!ended) continue;
            const details = { option: ended.decision.option, outcome: ended.decision.outcome, ...(ended.details as object | undefined) };
            final = await finish(tx, stored, ended, 'request.decided', { event: 'decided', actor: ended.actor, details }, now);
            break;
          }
        }
        // The notification outbox, with the final status (a request decided on arrival is no news).
        for (const hook of createdHooks) await hook(final, tx, now);
        if (supersede && record.source.session !== null) {
          for (const older of await tx.requests.findPendingBySession(format, submitter, record.source.session)) {
            if (older.record.id === record.id || !supersede.matches(older)) continue;
            const audit = { event: 'superseded', actor: supersede.actor, details: { ...supersede.details, superseded_by: record.id } };
            await finish(tx, older, { status: 'cancelled', decision: null }, 'request.cancelled', audit, now);
          }
        }
        return { stored: final, created: true };
      }
    },

    async get(id: string, principal: Principal): Promise<StoredRequest> {
      return ownedOrMissing(await store.requests.get(id), id, principal);
    },

    decide(id: string, body: DecisionBody, principal: Principal): Promise<StoredRequest> {
      return store.write(async (tx) => decideIn(tx, ownedOrMissing(await tx.requests.get(id), id, principal), body, actorName(principal)));
    },

    /**
     * Decides on behalf of someone who is not an API caller (a decide hook `hook:<name>`, a
     * decision link `link:<hook>`), through the same checks and transaction shape; `details`
     * join the audit row.
     */
    decideAs(id: string, body: DecisionBody, actor: string, details?: Record<string, unknown>): Promise<StoredRequest> {
      return store.write(async (tx) => {
        const stored = await tx.requests.get(id);
        if (!stored) throw new AppError('not_found', `request ${id} not found`);
        return decideIn(tx, stored, body, actor, details);
      });
    },

    /** Appends an audit row to a request (e.g. `hook.failed`). */
    note(id: string, event: string, actor: string, details?: unknown): Promise<void> {
      return store.write((tx) => tx.requests.appendAudit(id, event, actor, clock.now(), details));
    },

    cancel(id: string, principal: Principal): Promise<StoredRequest> {
      return store.write(async (tx) => {
        const stored = ownedOrMissing(await tx.requests.get(id), id, principal);
        const at = clock.now();
        pendingOrThrow(stored, at);
        return finish(tx, stored, { status: 'cancelled', decision: null }, 'request.cancelled', { event: 'cancelled', actor: actorName(principal) }, at);
      });
    },

    /**
     * Applies a native follow-up frame (resolved elsewhere, cancelled, expired). A terminal
     * request is never overwritten: the caller gets the stored one back with `changed: false`.
     */
    resolveUpstream(id: string, resolution: UpstreamResolution): Promise<{ stored: StoredRequest; changed: boolean }> {
      const type: TerminalEventType =
        resolution.status === 'cancelled' ? 'request.cancelled' : resolution.status === 'expired' ? 'request.expired' : 'request.decided';
      return store.write(async (tx) => {
        const stored = await tx.requests.get(id);
        if (!stored) throw new AppError('not_found', `request ${id} not found`);
        if (stored.record.status !== 'pending') return { stored, changed: false };
        // Taken as the agent's side reports it even just past the deadline, before the sweep:
        // the upstream ended its own interaction, and answering it now would end it twice.
        const at = clock.now();
        const event = type === 'request.decided' ? 'decided' : resolution.status;
        const updated = await finish(tx, stored, resolution, type, { event, actor: resolution.actor, details: resolution.details }, at);
        return { stored: updated, changed: true };
      });
    },

    /**
     * Expires everything due at `now`, each exactly once: due rows are claimed (another daemon
     * sweeping at the same moment skips them) and the update is conditional on pending.
     */
    async expireDue(): Promise<StoredRequest[]> {
      const expired: StoredRequest[] = [];
      for (;;) {
        const batch = await store.write(async (tx) => {
          const now = clock.now();
          const out: StoredRequest[] = [];
          for (const stored of await tx.requests.claimDue(now, EXPIRY_BATCH)) out.push(await expireIn(tx, stored, now));
          return out;
        });
        expired.push(...batch);
        if (batch.length < EXPIRY_BATCH) return expired;
      }
    },

    nextDeadline(): Promise<number | null> {
      return store.requests.nextDeadline();
    },

    list(filters: ListFilters): Promise<StoredRequest[]> {
      return store.requests.list(filters);
    },

    history(filters: HistoryFilters): Promise<StoredRequest[]> {
      return store.requests.history(filters);
    },

    async audit(id: string, principal: Principal) {
      ownedOrMissing(await store.requests.get(id), id, principal);
      return store.requests.audit(id);
    },

    /** For native formats: the stored request behind a native key, if this submitter sent it. */
    findByNativeKey(format: string, principal: Principal, key: string): Promise<StoredRequest | undefined> {
      return store.requests.findByNativeKey(format, submitterKey(principal), key);
    },

    /**
     * For native formats: frees this submitter's native key (see RequestRecords.releaseNativeKey),
     * so the next frame with it asks anew instead of getting the old request's decision.
     */
    releaseNativeKey(format: string, principal: Principal, key: string): Promise<boolean> {
      return store.write((tx) => tx.requests.releaseNativeKey(format, submitterKey(principal), key));
    },

    /** For native formats: this submitter's pending requests of one native session (`source.session`), oldest first. */
    findPendingBySession(format: string, principal: Principal | { submitter: string }, session: string): Promise<StoredRequest[]> {
      return store.requests.findPendingBySession(format, 'submitter' in principal ? principal.submitter : submitterKey(principal), session);
    },
  };
}

export type RequestService = ReturnType<typeof createRequestService>;

/** What rules match a request by that its content hash leaves out (policy/request-facts.ts): the tool first, then the source fields. */
function matchable(r: Pick<HandupRequest, 'tool' | 'source'>): unknown[] {
  return [r.tool ?? null, r.source.agent ?? null, r.source.session ?? null, r.source.cwd ?? null, r.source.repo ?? null];
}

/** An `ask` rule's overrides: the request stays pending, with this risk and timeout. */
function askOverrides(record: HandupRequest, ask: { risk?: HandupRequest['risk']; timeout?: string }, now: number): HandupRequest {
  const out = { ...record };
  if (ask.risk !== undefined) out.risk = ask.risk;
  if (ask.timeout !== undefined) {
    const ms = ask.timeout === 'none' ? null : parseDuration(ask.timeout);
    out.timeout = ask.timeout === 'none' ? null : ask.timeout;
    out.expires_at = ms === null ? null : ms.ok ? now + ms.ms : out.expires_at;
  }
  return out;
}

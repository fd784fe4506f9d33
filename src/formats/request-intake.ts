import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { FollowUp, WireAdapter } from '../adapters/adapter.js';
import { hasGrant, missingGrant, requireTimeoutApprove } from '../auth/grants.js';
import type { Principal } from '../auth/principal.js';
import { checkCallbackUrl } from '../callbacks/callback-url-policy.js';
import type { Clock } from '../lib/clock.js';
import type { Config } from '../config.js';
import { canonicalJson } from '../lib/canonical-json.js';
import { formatDuration, ONE_YEAR_MS } from '../lib/durations.js';
import { newId } from '../lib/ids.js';
import { noNul } from '../lib/no-nul.js';
import { AppError, RequestNotTaken, validationError } from '../lib/errors.js';
import { draftFromBody } from '../requests/request-draft.js';
import type { StoredRequest } from '../storage/request-records.js';
import { parseCreateBody } from '../requests/create-body-fast-path.js';
import type { CreateRequestBody } from '../requests/request-schema.js';
import type { NativeOrigin, RequestService } from '../requests/request-service.js';
import type { Supersede } from '../requests/request-hooks.js';
import type { FrameContextReader } from './frame-context.js';
import { issuesInFrame } from './frame-field.js';
import { parseFollowUp, parseFrame } from './parse-frame.js';
import { isUpstreamDecision, upstreamActor, upstreamDecision } from './upstream-decision.js';

export interface CreateOptions {
  principal: Principal;
  /** `handup`, `mcp`, or the wire format whose adapter normalised the frame. */
  format: string;
  /** Where `on_timeout: approve` came from (a body field or the URL query), named when the principal may not ask for it. */
  onTimeoutFrom?: { field: string };
  native?: NativeOrigin;
  supersede?: Supersede;
  /** Runs once the request is known to be well-formed, just before it is stored (e.g. a rate limit). */
  admit?: () => Promise<void>;
  /** The create to call instead of the service's (`POST /v1/rules/test` reads the draft and stores nothing). */
  create?: RequestService['create'];
}

export interface SubmitOptions extends Pick<CreateOptions, 'principal' | 'admit' | 'create'> {
  /** Query values applied over the normalised request (`timeout`, `on_timeout`, `callback_url`). */
  overrides: Partial<Pick<CreateRequestBody, 'timeout' | 'on_timeout' | 'callback_url'>>;
  /** Per-format context, handed to the adapter as `FrameContext.query`. */
  context: Readonly<Record<string, string>>;
}

export type FollowUpResult =
  | { ignored: true }
  /** `requests`: every request a session-wide follow-up ended, oldest first (`stored` is the first). */
  | { ignored: false; stored: StoredRequest; requests?: StoredRequest[] };

export interface SubmitResult {
  stored: StoredRequest;
  created: boolean;
  /**
   * The native reply a record answers this frame with. A replay may ask in another shape than
   * the frame that made the record (a Claude Code PermissionRequest after its PreToolUse): the
   * stored reply is rendered again for this frame's context then, else it is the stored one.
   */
  replyFor(stored: StoredRequest): unknown;
}

/** See SubmitResult.replyFor: only adapters whose replays may differ in context (replayContext) render again. */
function replyRenderer(adapter: WireAdapter, context: unknown): (stored: StoredRequest) => unknown {
  return (stored) => {
    const stays = stored.nativeReply === null || stored.nativeReply === undefined || !adapter.replayContext;
    if (stays || canonicalJson(stored.nativeContext) === canonicalJson(context)) return stored.nativeReply ?? null;
    const at = stored.resolvedAt ?? stored.record.created_at;
    const noRpcId = (): number => {
      throw new Error('a replay takes no new rpc id');
    };
    try {
      return adapter.renderReply(stored.record, context, { now: at, uuid: () => randomUUID(), ulid: () => newId(at), rpcId: noRpcId }) ?? null;
    } catch {
      return stored.nativeReply;
    }
  };
}

/**
 * Native keys and sessions are looked up in columns of their own, and PostgreSQL's text cannot
 * hold U+0000: a frame naming one with it names no request on either store, so it is refused
 * before any lookup (on PostgreSQL the lookup itself would fail).
 */
function refuseNul(what: string, values: ReadonlyArray<string | undefined>): void {
  const bad = values.find((v) => v !== undefined && !noNul(v));
  if (bad !== undefined) throw new AppError('invalid_frame', `${what} ${JSON.stringify(bad)}: must not contain U+0000`);
}

export interface RequestIntakeDeps {
  requests: RequestService;
  config: Readonly<Config>;
  clock: Clock;
  /** Context a frame's adapter needs that takes I/O to find (a Claude Code hook's git work tree). */
  frameContext?: FrameContextReader;
}

/**
 * Requests in, records out: the one create path of every request (a handup body over HTTP or
 * MCP, a native frame over HTTP or a bridge WebSocket), and the path of native follow-up frames.
 */
export function createRequestIntake({ requests, config, clock, frameContext }: RequestIntakeDeps) {
  /**
   * Ends each of this submitter's pending requests of the session, one by one through
   * resolveUpstream (so each gets its audit row, event and terminal hooks). None pending, or all
   * ended meanwhile, is a no-op rather than a 404: a session may well have nothing waiting.
   */
  async function resolveSession(adapter: WireAdapter, asked: Extract<FollowUp, { kind: 'resolve-session' }>, principal: Principal): Promise<FollowUpResult> {
    const details: Record<string, unknown> = { format: adapter.format, session: asked.session };
    if (asked.feedback) details.feedback = asked.feedback;
    const ended: StoredRequest[] = [];
    for (const stored of await requests.findPendingBySession(adapter.format, principal, asked.session)) {
      // As for a single request (upstreamDecision): cancelled and expired carry no decision.
      const result = await requests.resolveUpstream(stored.record.id, { status: asked.status, decision: null, actor: upstreamActor(principal), details });
      if (result.changed) ended.push(result.stored);
    }
    const [first] = ended;
    return first ? { ignored: false, stored: first, requests: ended } : { ignored: true };
  }

  /**
   * The `timeout` a frame's own deadline gives (the rest of the time, at most a year), unless the
   * submitter chose one. A deadline already past leaves nothing to ask: 422.
   */
  function deadline(expiresAt: number | undefined, overrides: SubmitOptions['overrides']): Pick<CreateRequestBody, 'timeout'> {
    if (expiresAt === undefined || overrides.timeout !== undefined) return {};
    return { timeout: formatDuration(Math.min(Math.max(expiresAt - clock.now(), 1), ONE_YEAR_MS)) };
  }

  /** This submitter's request a `resolve` follow-up names: by its native key, else by its fallback keys in order. */
  async function findTarget(adapter: WireAdapter, asked: Extract<FollowUp, { kind: 'resolve' }>, principal: Principal): Promise<StoredRequest | undefined> {
    if (asked.inSession) {
      const { session, context } = asked.inSession;
      const pending = (await requests.findPendingBySession(adapter.format, principal, session)).filter((s) =>
        Object.entries(context).every(([k, v]) => (s.nativeContext as Record<string, unknown> | null)?.[k] === v),
      );
      // Two would leave the frame ambiguous: it resolves neither.
      if (pending.length > 1)
        throw new AppError('invalid_frame', `the frame names no request, and session "${session}" has ${pending.length} pending: name one`);
      return pending[0];
    }
    for (const key of [asked.nativeKey, ...(asked.fallbackKeys ?? [])]) {
      const stored = await requests.findByNativeKey(adapter.format, principal, key);
      if (stored) return stored;
    }
    return undefined;
  }

  /**
   * Whether a stored frame, read by this version's adapter, asks what `normalized` asks: its
   * request and the context a replay must repeat. A frame an earlier version stored may read
   * differently today (a preview it did not show, a context it did not keep), so the record it
   * made no longer matches a replay of the very same frame; read again, it does.
   */
  function sameAsStored(adapter: WireAdapter, normalized: { request: unknown; context?: unknown }, ctx: Readonly<Record<string, string>>) {
    const asked = (n: { request: unknown; context?: unknown }) =>
      canonicalJson([n.request, adapter.replayContext ? adapter.replayContext(n.context ?? null) : (n.context ?? null)]);
    const now = asked(normalized);
    return (stored: unknown): boolean => {
      if (stored === null || stored === undefined) return false;
      try {
        const parsed = parseFrame(adapter, stored);
        return parsed.success && asked(normalizeFrame(adapter, parsed.data, ctx)) === now;
      } catch {
        return false;
      }
    };
  }

  const intake = {
    /**
     * The create path every request takes, once its body is a valid handup Request: the
     * principal's right to `on_timeout: approve`, the callback allowlist, the defaults (a
     * format's own default timeout, else `requests.default_timeout`), `admit`, then the service.
     */
    async create(
      body: CreateRequestBody,
      { principal, format, onTimeoutFrom = { field: 'on_timeout' }, native, supersede, admit, create = requests.create }: CreateOptions,
    ): Promise<{ stored: StoredRequest; created: boolean; replyStale?: true }> {
      // An info notice always expires, whatever it says (request-draft.ts): its on_timeout approves nothing.
      if (body.on_timeout === 'approve' && body.kind !== 'info') requireTimeoutApprove(principal, onTimeoutFrom.field);
      if (body.callback_url != null) checkCallbackUrl(body.callback_url, config.callbacks.allowlist);
      const draft = draftFromBody(body, {
        defaultTimeout: config.formats[format]?.default_timeout ?? config.requests.default_timeout,
        integration: principal.kind === 'submit' ? principal.name : null,
      });
      await admit?.();
      return create(draft, { principal, format, native, supersede });
    },

    /**
     * Parses and normalises a request frame, holds it to handup's limits (refusing, never
     * truncating), and creates the record, or finds the one this submitter's earlier frame
     * with the same native key created (`created: false`).
     */
    async submit(adapter: WireAdapter, frame: unknown, { principal, overrides, context, admit, create }: SubmitOptions): Promise<SubmitResult> {
      const parsed = parseFrame(adapter, frame);
      if (!parsed.success) throw validationError('invalid_frame', parsed.error.issues);
      const readWith = frameContext ? await frameContext(adapter.format, parsed.data, context) : context;
      const normalized = normalizeFrame(adapter, parsed.data, readWith);
      const key = normalized.nativeKey;
      // A native record without a key could never be replayed or followed up: an adapter bug, not bad input.
      if (typeof key !== 'string' || key.length === 0) throw new Error(`the ${adapter.format} adapter produced no native key`);
      refuseNul('native key', [key]);
      if (normalized.expiresAt !== undefined && normalized.expiresAt <= clock.now()) {
        // A new frame whose deadline passed asks nobody anything. A replay still finds its record,
        // through the create below, which holds it to the stored content like any replay: a frame
        // with other content must not get the old decision just because its deadline has passed.
        const seen = await requests.findByNativeKey(adapter.format, principal, key);
        if (!seen) {
          throw new RequestNotTaken(`expiresAt ${new Date(normalized.expiresAt).toISOString()} has passed: the upstream no longer waits for an answer`);
        }
      }

      // The record's dedupe_key holds the native key (docs/formats/README.md), so its limit is checked too.
      const built = { ...normalized.request, dedupe_key: key };
      const checked = parseCreateBody(built);
      if (!checked.success) {
        const err = validationError('invalid_frame', issuesInFrame(checked.error.issues, built, frame));
        throw new AppError('invalid_frame', `the frame does not fit a handup Request: ${err.message}`, err.details);
      }
      const body: CreateRequestBody = { ...checked.data, ...deadline(normalized.expiresAt, overrides), ...overrides };
      const onTimeoutFrom = { field: overrides.on_timeout === 'approve' ? 'query.on_timeout' : 'on_timeout' };
      const native = {
        key,
        frame,
        context: normalized.context ?? null,
        ...(normalized.notes?.length ? { notes: normalized.notes } : {}),
        ...(normalized.personOnly?.length ? { personOnly: normalized.personOnly } : {}),
        ...(adapter.replayContext ? { replayContext: adapter.replayContext.bind(adapter) as (c: unknown) => unknown } : {}),
        asksAsStored: sameAsStored(adapter, normalized, readWith),
      };
      const newer = normalized.context;
      const supersedes = adapter.supersedes?.bind(adapter);
      const supersededBy = adapter.supersededBy?.bind(adapter);
      const supersede =
        (supersedes || supersededBy) && adapter.maySupersede?.(newer) !== false
          ? {
              matches: (older: StoredRequest) => supersedes?.(newer, older.nativeContext) === true,
              // A new frame the upstream has already replaced asks nothing: nothing is stored or superseded.
              refusedBy: (pending: StoredRequest) =>
                pending.nativeKey !== key && supersededBy?.(newer, pending.nativeContext)
                  ? new RequestNotTaken(
                      `pending request ${pending.record.id} (${pending.nativeKey}) of session "${pending.record.source.session}" came after this frame upstream, which has superseded it`,
                    )
                  : undefined,
              actor: upstreamActor(principal),
              details: { format: adapter.format, native_key: key },
            }
          : undefined;
      const result = await intake.create(body, { principal, format: adapter.format, onTimeoutFrom, native, supersede, admit, create });
      // A stale stored reply (the service says why) goes to nobody: the replay gets its record only.
      return { stored: result.stored, created: result.created, replyFor: result.replyStale ? () => null : replyRenderer(adapter, normalized.context ?? null) };
    },

    /**
     * What a follow-up frame asks (parsed by the adapter's follow-up schema); nothing is changed
     * yet. The frame alone names the native key; when this submitter has a pending request with
     * it, the adapter reads the frame again with that record in hand (an ALP answer that is one
     * of the record's own options), since only the record knows what its options are.
     */
    /**
     * The stored reply of a request as it may be sent now: null while a newer rival of its
     * session is pending (an Ask plan after an approved one). `plan/approve` names no plan, so the
     * host would apply the old approval to the newest plan, which no reviewer approved.
     */
    async currentReply(adapter: WireAdapter, stored: StoredRequest): Promise<unknown> {
      const session = stored.record.source.session;
      if (stored.nativeReply == null || !adapter.supersedes || session === null) return stored.nativeReply ?? null;
      // The submitter's session, whoever asks (the admin reads any request's reply).
      const pending = await requests.findPendingBySession(adapter.format, { submitter: stored.submitter }, session);
      const newer = pending.some(
        (p) =>
          p.record.id !== stored.record.id && adapter.maySupersede?.(p.nativeContext) !== false && adapter.supersedes!(p.nativeContext, stored.nativeContext),
      );
      return newer ? null : stored.nativeReply;
    },

    async readFollowUp(adapter: WireAdapter, frame: unknown, context: Readonly<Record<string, string>>, principal: Principal): Promise<FollowUp> {
      if (!adapter.followUpSchema || !adapter.followUp) {
        throw new AppError('unsupported_frame', `the ${adapter.format} format has no follow-up frames`);
      }
      const parsed = parseFollowUp(adapter, frame);
      if (!parsed.success) throw validationError('invalid_frame', parsed.error.issues);
      const ctx = { query: context };
      const asked = adapter.followUp(parsed.data, ctx);
      if (asked.kind === 'resolve-session') refuseNul('session', [asked.session]);
      if (asked.kind !== 'resolve') return asked;
      refuseNul('native key', [asked.nativeKey, ...(asked.fallbackKeys ?? [])]);
      refuseNul('session', [asked.inSession?.session]);
      const stored = await findTarget(adapter, asked, principal);
      // Missing is applyFollowUp's 404; an ended request is left alone, whatever the record says.
      if (!stored || stored.record.status !== 'pending') return asked;
      const read = adapter.followUp(parsed.data, ctx, { record: stored.record, context: stored.nativeContext, now: clock.now() });
      if (read.kind !== 'resolve' || read.nativeKey !== asked.nativeKey) {
        throw new Error(`the ${adapter.format} adapter named another request once it saw the stored record`);
      }
      return read;
    },

    /**
     * Applies what a follow-up frame asks to this submitter's request with that native key, or
     * to each of its pending requests of the session a session-wide follow-up names.
     * A request that already ended is left as it is (a follow-up never overwrites a terminal state).
     */
    async applyFollowUp(adapter: WireAdapter, asked: FollowUp, principal: Principal): Promise<FollowUpResult> {
      if (asked.kind === 'ignored') return { ignored: true };
      if (asked.kind === 'resolve-session') return resolveSession(adapter, asked, principal);
      const result = await resolveOne(adapter, asked, principal);
      for (const key of asked.releaseKeys ?? []) await requests.releaseNativeKey(adapter.format, principal, key);
      return result;
    },
  };

  /** The request a `resolve` follow-up names, ended as it asks (unless it already ended). */
  async function resolveOne(adapter: WireAdapter, asked: Extract<FollowUp, { kind: 'resolve' }>, principal: Principal): Promise<FollowUpResult> {
    const stored = await findTarget(adapter, asked, principal);
    if (!stored && asked.inSession) return { ignored: true };
    if (!stored) throw new AppError('not_found', `no ${adapter.format} request with native key "${asked.nativeKey}"`);
    if (stored.record.status !== 'pending') return { ignored: true };
    // An agent must never end its own request approved: a decision "made elsewhere"
    // counts only from a token the admin trusted with it. Withdrawals and timeouts need nothing.
    // Asked only of a frame that would change something: one naming no request is 404, one
    // for a request that already ended 202, whoever sends it.
    if (isUpstreamDecision(asked.status) && !hasGrant(principal, 'resolve_upstream')) {
      throw new AppError('forbidden', `a follow-up that ends a request ${asked.status} ${missingGrant(principal, 'resolve_upstream')}`);
    }
    const details: Record<string, unknown> = { format: adapter.format };
    if (asked.option !== undefined) details.option = asked.option;
    if (asked.feedback) details.feedback = asked.feedback;
    const result = await requests.resolveUpstream(stored.record.id, {
      status: asked.status,
      decision: upstreamDecision(stored.record, asked, clock.now()),
      actor: upstreamActor(principal),
      details,
    });
    return result.changed ? { ignored: false, stored: result.stored } : { ignored: true };
  }
  return intake;
}

export type RequestIntake = ReturnType<typeof createRequestIntake>;

/** Adapters may validate parts of a frame with zod themselves; such a failure is the frame's fault. */
function normalizeFrame(adapter: WireAdapter, frame: unknown, context: Readonly<Record<string, string>>) {
  try {
    return adapter.normalize(frame, { query: context });
  } catch (err) {
    if (err instanceof z.ZodError) throw validationError('invalid_frame', err.issues);
    throw err;
  }
}

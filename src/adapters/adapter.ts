import type { z } from 'zod';
import type { CreateRequestBody, HandupRequest, Status } from '../requests/request-schema.js';

/**
 * The contract every wire format implements (docs/formats/README.md). An adapter is a pure translation:
 * no I/O, no clock, no logging, no globals. Fresh ids and times it needs for a reply come in
 * through `ReplyEnv`, so a golden fixture fully specifies an adapter.
 *
 * Adding a format = one file implementing this, its fixtures under test/fixtures/<format>/,
 * and one line in registry.ts.
 */

/** Context of the HTTP/WebSocket call that carried the frame. */
export interface FrameContext {
  /** Query parameters (per-format context such as Ask's `session`). */
  readonly query: Readonly<Record<string, string | undefined>>;
}

export interface Normalized<Ctx = unknown> {
  /** The handup Request this frame asks for, exactly as POST /v1/requests would take it. */
  request: CreateRequestBody;
  /** Permanent key derived from native ids (e.g. `roll:<workspace>:<approval id>`); null for handup. */
  nativeKey: string | null;
  /** Whatever renderReply needs later (native ids, option keys, language). JSON-serialisable. */
  context: Ctx;
  /** Facts worth an audit note at creation (e.g. a field the record cannot hold). */
  notes?: string[];
  /**
   * Option ids only a person may choose (a grant for the whole session): a rule, auto mode or an
   * `on_timeout: approve` never takes them, and leaves the request to a person when they are all
   * it could take.
   */
  personOnly?: string[];
  /**
   * The frame's own deadline (unix ms), when it carries one: the record expires then unless the
   * submitter's `timeout` says otherwise. A deadline already past means nothing is left to ask.
   */
  expiresAt?: number;
}

/** Fresh values a reply may need; injected so rendering stays pure and fixtures stay exact. */
export interface ReplyEnv {
  /** Unix ms of the terminal transition. */
  now: number;
  uuid(): string;
  ulid(): string;
  /** The broker's JSON-RPC id counter (Ask, ALP). */
  rpcId(): number;
}

/** What a follow-up frame (resolved elsewhere, cancelled, expired) asks for. */
export type FollowUp =
  | { kind: 'ignored'; reason: string }
  | {
      kind: 'resolve';
      nativeKey: string;
      /**
       * Keys tried, in order, when this submitter has no request with `nativeKey`: the key the
       * same request has when its frame came without the context the follow-up carries (a bare
       * PaperClip request is `paperclip:-:{requestId}`, its follow-up events name the run).
       */
      fallbackKeys?: string[];
      /**
       * Keys freed once the frame is applied, whether it ended a request or found one already
       * ended: the call they stood for is over, so a later frame with the same key is a new
       * request. For keys a later, separate call repeats (Claude Code's input hash).
       */
      releaseKeys?: string[];
      /**
       * For a frame that names no request but its session (Ask's `plan.approved` without an id):
       * the one pending request of this submitter's session whose native context has these
       * values. `nativeKey` then only names it in messages. None pending: the frame changes nothing.
       */
      inSession?: { session: string; context: Record<string, unknown> };
      status: Exclude<Status, 'pending'>;
      /** For approved/denied/answered: the option chosen upstream (an id of the record's options). */
      option?: string;
      feedback?: string | null;
      fields?: Record<string, unknown> | null;
    }
  | {
      /**
       * Ends every pending request of this format and submitter whose `source.session` is
       * `session`, for protocols whose "the turn/session is over" frame names no request (Ask's
       * `turn.aborted`, `session.ended`). Matched on the stored session itself, never on a native
       * key prefix: session ids may contain the key's separator.
       */
      kind: 'resolve-session';
      session: string;
      status: 'cancelled' | 'expired';
      /** Kept in each request's audit row (cancelled and expired records carry no decision). */
      feedback?: string | null;
    };

/**
 * The pending request a `resolve` follow-up names, as stored, for an adapter that reads the
 * frame against it (e.g. an answer that is the label of one of the record's options).
 */
export interface FollowUpTarget<Ctx = unknown> {
  record: HandupRequest;
  /** The adapter's own `Normalized.context` from when the request was created. */
  context: Ctx;
  /** Unix ms when the frame is applied (e.g. to tell a cancel after the native deadline from one before). */
  now: number;
}

export interface WireAdapter<Frame = unknown, Ctx = unknown, Follow = unknown> {
  /** URL segment, `format` column value and fixture folder name. Never renamed. */
  readonly format: string;
  /** Native request frames, as the sender documents them (not our model). */
  readonly frameSchema: z.ZodType<Frame>;
  /**
   * A compiled check of a strict subset of `frameSchema`: the format's common request frame, which
   * the schema returns unchanged (no defaults, no transforms on it). A frame it accepts skips
   * zod's walk (src/formats/parse-frame.ts) and reaches `normalize` as the very object that is
   * stored, so `normalize` only reads its frame; every other frame goes to zod, which alone words
   * the errors. Optional: a speed-up only, held against `frameSchema` by
   * test/unit/common-frame.test.ts.
   */
  isCommonFrame?(frame: unknown): boolean;
  /** Native follow-up frames; absent when the format has none. */
  readonly followUpSchema?: z.ZodType<Follow>;
  /**
   * Whether a frame both schemas could not read whole was meant as a request (its type names
   * one): on a bridge socket it gets the request schema's error, where event noise gets nothing.
   * Needed only where the follow-up schema takes frames the request schema refuses.
   */
  isRequestFrame?(frame: unknown): boolean;
  /**
   * This format's settings under `formats.<format>` in the configuration, with their defaults;
   * each is also set by `COUNTERSIGN_FORMATS_<FORMAT>_<KEY>`. `default_timeout` (a duration or
   * "none"): the timeout of requests that give none and carry no deadline of their own, for a
   * protocol with a deadline of its own. Absent: the format has no settings, and its requests
   * take `requests.default_timeout`.
   */
  readonly config?: { readonly default_timeout: string };
  /**
   * Frame → handup Request. Throws AppError('invalid_frame') for semantic gaps and
   * AppError('unsupported_frame') for a well-formed frame that asks nothing of a human.
   */
  normalize(frame: Frame, ctx: FrameContext): Normalized<Ctx>;
  /**
   * The native reply for a request that left pending (decided, expired or cancelled), or null
   * where the protocol has none. Called once, inside the terminal transaction; stored.
   */
  renderReply(record: HandupRequest, context: Ctx, env: ReplyEnv): unknown;
  /**
   * Follow-up frame → what it asks of the stored record. The intake calls it once without
   * `stored` to learn the native key; when that finds a pending request of this submitter, it
   * calls it again with the record and its context and applies that answer, which must name the
   * same key. Without `stored` it reads the frame alone (the key must not depend on `stored`).
   */
  followUp?(frame: Follow, ctx: FrameContext, stored?: FollowUpTarget<Ctx>): FollowUp;
  /**
   * The part of the native context a replayed frame must repeat to get the stored request (with
   * the same content hash), else 409 native_conflict. Absent: all of it. Claude Code leaves out
   * which hook event asked, since PreToolUse and PermissionRequest ask about the same tool call.
   */
  replayContext?(context: Ctx): unknown;
  /**
   * Checks a reviewer's decision against what the protocol will take, before anything is stored:
   * throws AppError('invalid_decision', '<field>: why') for an answer the upstream would refuse
   * (PaperClip's textValidation, Roll's control limits). `record` is the decided record, as
   * renderReply would get it. Absent where the record's own rules are all the protocol has.
   */
  checkDecision?(record: HandupRequest, context: Ctx): void;
  /**
   * Whether a new request supersedes an older pending one of the same submitter and session
   * (Ask: a newer plan proposal, since plan/approve names no plan). The older one ends
   * `cancelled`, audited `superseded`, in the transaction that creates the new one.
   */
  supersedes?(newer: Ctx, older: Ctx): boolean;
  /**
   * The other direction: whether a pending request of the same submitter and session makes this
   * new one stale, because the upstream already replaced what it asks (Ask: a plan proposed
   * before the session's pending plan, a replayed event log delivering it late). A new frame it
   * holds for is refused (422 unsupported_frame) and supersedes nothing; a replay of a stored one
   * still gets its record. Asked only when `maySupersede` allows.
   */
  supersededBy?(arrived: Ctx, pending: Ctx): boolean;
  /**
   * Whether this new request can supersede anything at all; when it cannot, the session's
   * pending requests are not read (Ask: only a plan supersedes, and a busy session may hold
   * thousands of pending tool approvals). Absent: whenever `supersedes` is defined.
   */
  maySupersede?(newer: Ctx): boolean;
  /**
   * The stored reply stamped with a sequence number the bridge gives (PaperClip's controllerSeq,
   * docs/formats/paperclip.md) and fresh ids where the protocol wants one per sending; null when this reply
   * takes no sequence number (it is then sent as stored). Absent for protocols without one.
   */
  sequenceReply?(reply: unknown, seq: number, env: Pick<ReplyEnv, 'ulid'>): unknown;
  /**
   * Whether the native reply carries a reviewer's `scope: "session"` as the runtime's own grant
   * for the session (PaperClip's `accept_for_session`). Where the request names no action a rule
   * could remember, such an approval is sent as that grant and stores no rule. Absent: never.
   */
  grantsSession?(context: Ctx): boolean;
}

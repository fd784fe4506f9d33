import type { CreationVerdict } from '../policy/creation-verdict.js';
import type { Scope } from '../policy/scope-rule.js';
import type { StoredRequest } from '../storage/request-records.js';
import type { WriteTx } from '../storage/store.js';
import type { RequestEventType } from './request-events.js';
import type { Decision, HandupRequest, Status } from './request-schema.js';

/**
 * What the request service calls out to, and when: the parts wired in from outside the domain
 * (native replies, callbacks, notifications, rules, mutes) implement these.
 */

export type TerminalEventType = Exclude<RequestEventType, 'request.created'>;

/** A terminal transition, handed to hooks inside the transaction that commits it. */
export interface TerminalTransition {
  stored: StoredRequest;
  type: TerminalEventType;
  at: number;
  /**
   * When the transition is written: `at`, except for an expiry swept after its deadline (a daemon
   * that was down), which is recorded at the deadline but queues its deliveries now.
   */
  now: number;
  /** Who caused it (the audit actor): a principal's name, `timeout` or `upstream`. */
  actor: string;
}

/**
 * Runs inside the write transaction of every terminal transition (decision, expiry, cancel,
 * upstream resolution). Whatever a hook writes through `tx` commits or rolls back with the
 * transition: this is where the native reply is rendered and the callback outbox row is written.
 */
export type TerminalHook = (transition: TerminalTransition, tx: WriteTx) => Promise<void>;

/**
 * Runs on a reviewer's decision before it is stored, with the request as it would be once
 * decided; throwing (AppError 'invalid_decision') refuses the decision and stores nothing.
 */
export type DecisionCheck = (decided: StoredRequest) => void;

/** Pending requests a new one ends on arrival: same submitter, format and `source.session`. */
export interface Supersede {
  /** Whether the new request supersedes this older pending one. */
  matches(older: StoredRequest): boolean;
  /**
   * The other direction: the error a pending request of the session that makes the new one
   * stale refuses it with, else undefined. Asked in the creating transaction, so a newer request
   * committed a moment earlier counts; a replay of a stored request is answered before it.
   */
  refusedBy?(pending: StoredRequest): Error | undefined;
  /** Audit actor of the `superseded` rows (no native reply is sent for them). */
  actor: string;
  /** Audit details; `superseded_by` (the new request's id) is added. */
  details?: Record<string, unknown>;
}

/** How a request ends on arrival (before anyone sees it): a mute dismissing a notice. */
export interface ArrivalDecision {
  status: Exclude<Status, 'pending'>;
  decision: Decision;
  actor: string;
  details?: unknown;
}

/**
 * Runs inside the create transaction, after the insert, in order: an arrival hook may end the
 * request there and then (returning how); a created hook sees the request as it was stored
 * (final status) and writes what must commit with it (the notification outbox).
 */
export type ArrivalHook = (stored: StoredRequest, tx: WriteTx, at: number) => Promise<ArrivalDecision | null>;
export type CreatedHook = (stored: StoredRequest, tx: WriteTx, at: number) => Promise<void>;

/**
 * Rules and auto mode at creation, read inside the creating transaction before
 * the request is stored. Wired from src/rules; absent, every request waits for a person.
 */
export interface CreationPolicy {
  /** `personOnly`: option ids only a person may choose (Normalized.personOnly). */
  verdict(tx: WriteTx, record: HandupRequest, format: string, at: number, personOnly: readonly string[]): Promise<CreationVerdict>;
  /** Counts a real match of a rule, in the same transaction. */
  hit(tx: WriteTx, ruleId: string, at: number): Promise<void>;
}

/**
 * Stores the rule a scoped approval asks for in the decision's transaction; its id, or null where
 * the runtime's own session grant stands in for it (WireAdapter.grantsSession).
 */
export type ScopedAllow = (tx: WriteTx, stored: StoredRequest, scope: Scope, actor: string, at: number) => Promise<string | null>;

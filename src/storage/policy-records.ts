import type { AutoState } from '../policy/auto-mode.js';
import type { Rule } from '../policy/rule-schema.js';
import type { HandupRequest } from '../requests/request-schema.js';

/** A rule kept in the store (created over the API, by a scoped approval, or on the web page). */
export interface StoredRuleRow {
  rule: Rule;
  created_at: number;
  /** Who created it: the audit actor (`admin`, `token:<name>`). */
  created_by: string;
  expires_at: number | null;
}

export interface EndedWindow {
  since: number;
  until: number;
  before?: { resolvedAt: number; id: string } | undefined;
  limit: number;
}

export interface RuleHits {
  rule_id: string;
  hits: number;
  last_hit_at: number;
}

/** What every create reads: the stored rules' version (it moves on every change) and auto mode. */
export interface PolicyState {
  version: number;
  auto: AutoState;
  /** False until every request that ended before the facts table existed has its facts. */
  historyIndexed: boolean;
}

/** A change to the policy (a rule added or removed, auto mode switched): who, what, when. */
export interface PolicyAuditEntry {
  id: number;
  event: string;
  actor: string;
  at: number;
  subject: string | null;
  details?: unknown;
}

export interface PolicyReads {
  state(): Promise<PolicyState>;
  /** Every stored rule not expired at `now`, in evaluation order (oldest first). */
  rules(now: number): Promise<StoredRuleRow[]>;
  /** The earliest `expires_at` of the stored rules (expired ones not yet deleted included); null when none expires. */
  nextRuleExpiry(): Promise<number | null>;
  /** Hit counts of every rule that has matched a real request, config rules included. */
  hits(): Promise<RuleHits[]>;
  /**
   * The facts of requests that ended in [since, until] (both included), newest resolution
   * first, at most `limit`, and only those older than `before` (a page cursor): the
   * simulation's input.
   */
  ended(window: EndedWindow): Promise<Array<{ facts: string; resolvedAt: number }>>;
  /** Ended requests whose id sorts after `afterId`, by id, at most `limit`: indexing older history. */
  endedRecords(afterId: string, limit: number): Promise<Array<{ record: HandupRequest; format: string; resolvedAt: number }>>;
  /** Newest first. */
  audit(limit: number): Promise<PolicyAuditEntry[]>;
}

/** Writing the policy: only inside `Store.write`. */
export interface PolicyRecords extends PolicyReads {
  /** Adds a rule at the end of the stored list, with no hits; false, with nothing written, when its id is taken. */
  insertRule(row: StoredRuleRow): Promise<boolean>;
  /** Removes a rule (and its hit count); the removed row, or undefined when there was none. */
  deleteRule(id: string): Promise<StoredRuleRow | undefined>;
  /**
   * Removes rules expired at `now` and their hit counts; the removed rows, in evaluation order.
   * A row another transaction already removed is not returned again.
   */
  deleteExpired(now: number): Promise<StoredRuleRow[]>;
  /** Moves the version every daemon compares its cached rules with. */
  bumpVersion(): Promise<void>;
  /** Counts a real match of rule `ruleId` at `at`. */
  hit(ruleId: string, at: number): Promise<void>;
  setAuto(state: AutoState): Promise<void>;
  /** Turns auto mode off (set at `until` by `by`) if it is still the mode that runs out at `until`; true when it did. */
  expireAuto(until: number, by: string): Promise<boolean>;
  appendAudit(event: string, actor: string, at: number, subject: string | null, details?: unknown): Promise<void>;
  /**
   * Keeps the facts of an ended request, as the domain encoded them (src/policy/history-facts.ts),
   * once: a second call for the same request changes nothing.
   */
  indexEnded(requestId: string, resolvedAt: number, facts: string): Promise<void>;
  markHistoryIndexed(): Promise<void>;
}

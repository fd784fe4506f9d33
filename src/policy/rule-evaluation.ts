import { AppError } from '../lib/errors.js';
import { decide } from '../requests/decision-rules.js';
import type { Decision, HandupRequest, Outcome, Risk, Status } from '../requests/request-schema.js';
import type { RequestFacts } from './request-facts.js';
import { compileMatch, type FactsTest } from './rule-matcher.js';
import { sameActionTest } from './scope-rule.js';
import type { Rule } from './rule-schema.js';

/** A rule in the evaluation list, with where it came from (config file or the store). */
export interface PolicyRule extends Rule {
  source: 'config' | 'stored';
  created_at?: number;
  expires_at?: number | null;
}

export interface CompiledRule {
  rule: PolicyRule;
  test: FactsTest;
}

/**
 * Compiles each rule's matcher once; the list keeps its order. A rule that lets a request
 * through without a person (approve, dismiss) matches a `command` only when every command the
 * request shows does; deny and ask when any one does. A scoped approval's rule matches only the
 * same submitter and action (scope-rule.ts).
 */
export function compileRules(rules: readonly PolicyRule[]): CompiledRule[] {
  return rules.map((rule) => {
    const test = compileMatch(rule.match, { everyCommand: rule.action === 'approve' || rule.action === 'dismiss' });
    const sameAction = sameActionTest(rule);
    return { rule, test: sameAction ? (f) => sameAction(f) && test(f) : test };
  });
}

/**
 * The first rule that matches, in list order, or null. Info notices are matched only by dismiss
 * rules (dismiss rules match only info notices: their schema requires `kind: info`). A rule
 * whose `expires_at` has passed at `now` matches nothing.
 */
export function firstMatch(rules: readonly CompiledRule[], facts: RequestFacts, now: number): CompiledRule | null {
  const info = facts.kind === 'info';
  for (const c of rules) {
    if (info !== (c.rule.action === 'dismiss')) continue;
    if (c.rule.expires_at != null && c.rule.expires_at <= now) continue;
    if (c.test(facts)) return c;
  }
  return null;
}

/** What a matched rule does to one request. */
export type RuleOutcome =
  | { type: 'decide'; status: Exclude<Status, 'pending'>; decision: Decision }
  | { type: 'ask'; risk?: Risk; timeout?: string }
  /** The rule matched but cannot decide this request: it stays pending for a person. */
  | { type: 'skip'; reason: string };

/** What a rule needs to know of a request to tell whether it can decide it. */
export interface DecidableShape {
  kind: string;
  options: ReadonlyArray<{ id: string; outcome: Outcome }>;
  /** Approving would need `fields` (a form to fill in). */
  needs_fields: boolean;
  /** A deny needs feedback (`input.feedback: required_on_deny`). */
  feedback_required: boolean;
}

export type RulePlan = Exclude<RuleOutcome, { type: 'decide' }> | { type: 'decide'; option: string; feedback: string | null };

/**
 * Which option a matched rule would pick, or why it cannot
 * decide: approve takes the first option with outcome approve, deny the first with outcome
 * deny, dismiss the option `dismiss`; questions, requests without such an option and approvals
 * that would need `fields` are left to a person. A deny the request wants feedback for and the
 * rule gives none says which rule denied it. The one place these reasons live: creation and the
 * simulation both use it.
 */
export function rulePlan(rule: Rule, s: DecidableShape): RulePlan {
  if (rule.action === 'ask') {
    const out: RulePlan = { type: 'ask' };
    if (rule.risk !== undefined) out.risk = rule.risk;
    if (rule.timeout !== undefined) out.timeout = rule.timeout;
    return out;
  }
  if (s.kind === 'question') return { type: 'skip', reason: 'a question needs a person to answer it' };
  const option = rule.action === 'dismiss' ? s.options.find((o) => o.id === 'dismiss') : s.options.find((o) => o.outcome === rule.action);
  if (!option) return { type: 'skip', reason: `the request has no ${rule.action === 'dismiss' ? '"dismiss"' : rule.action} option` };
  if (option.outcome === 'approve' && s.needs_fields) {
    return { type: 'skip', reason: 'approving this request needs fields (input.fields) a rule cannot fill' };
  }
  let feedback = rule.action === 'deny' ? (rule.feedback ?? null) : null;
  // The request's own `required_on_deny` must not switch a deny rule off: the agent sets it.
  if (option.outcome === 'deny' && s.feedback_required && !feedback?.trim()) feedback = `Denied by rule ${rule.id}.`;
  return { type: 'decide', option: option.id, feedback };
}

/**
 * Applies a matched rule to a new request: its plan, then the decision through the same checks
 * as a reviewer's (decision-rules.ts), bound to the record's content_hash.
 */
export function ruleOutcome(rule: Rule, record: HandupRequest, at: number): RuleOutcome {
  const plan = rulePlan(rule, {
    kind: record.kind,
    options: record.options,
    needs_fields: Array.isArray(record.input?.fields) && record.input.fields.length > 0,
    feedback_required: record.input?.feedback === 'required_on_deny',
  });
  if (plan.type !== 'decide') return plan;
  try {
    const next = decide(record, { option: plan.option, content_hash: record.content_hash, feedback: plan.feedback }, { decidedBy: 'rule', decidedAt: at });
    return { type: 'decide', status: next.status, decision: { ...next.decision, rule_id: rule.id } };
  } catch (err) {
    if (err instanceof AppError) return { type: 'skip', reason: err.message };
    throw err;
  }
}

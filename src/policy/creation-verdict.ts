import type { Decision, HandupRequest, Status } from '../requests/request-schema.js';
import { unattendedView } from '../requests/decision-rules.js';
import { autoDecision, effectiveMode, type AutoModeName, type AutoState } from './auto-mode.js';
import { requestFacts } from './request-facts.js';
import { firstMatch, ruleOutcome, type CompiledRule, type PolicyRule, type RuleOutcome } from './rule-evaluation.js';

/** What policy does with a new request, before it is stored. */
export type CreationVerdict =
  | { type: 'none' }
  | { type: 'rule'; rule: PolicyRule; outcome: RuleOutcome }
  | { type: 'auto'; mode: AutoModeName; status: Exclude<Status, 'pending'>; decision: Decision };

/**
 * Rules first (first match wins, whatever it does: `ask` and a rule that cannot decide both keep
 * the request for a person), then auto mode for a request no rule matched. Rules see only the
 * options they may choose (`personOnly` left out: a grant for the whole session is a person's
 * call). Auto mode counts every approve option, a person's own among them: a request offering
 * two ways to approve is never auto-approved, and one whose only approve option is a person's
 * neither.
 */
export function creationVerdict(
  rules: readonly CompiledRule[],
  auto: Pick<AutoState, 'mode' | 'until'>,
  record: HandupRequest,
  format: string,
  at: number,
  personOnly: readonly string[] = [],
): CreationVerdict {
  const unattended = unattendedView(record, personOnly);
  const matched = firstMatch(rules, requestFacts(unattended, format), at);
  if (matched) return { type: 'rule', rule: matched.rule, outcome: ruleOutcome(matched.rule, unattended, at) };
  const mode = effectiveMode(auto, at);
  const decided = autoDecision(record, mode, at, personOnly);
  return decided ? { type: 'auto', mode, ...decided } : { type: 'none' };
}

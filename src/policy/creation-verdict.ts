import type { Decision, HandupRequest, Status } from '../requests/request-schema.js';
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
 * the request for a person), then auto mode for a request no rule matched.
 */
export function creationVerdict(
  rules: readonly CompiledRule[],
  auto: Pick<AutoState, 'mode' | 'until'>,
  record: HandupRequest,
  format: string,
  at: number,
): CreationVerdict {
  const matched = firstMatch(rules, requestFacts(record, format), at);
  if (matched) return { type: 'rule', rule: matched.rule, outcome: ruleOutcome(matched.rule, record, at) };
  const mode = effectiveMode(auto, at);
  const decided = autoDecision(record, mode, at);
  return decided ? { type: 'auto', mode, ...decided } : { type: 'none' };
}

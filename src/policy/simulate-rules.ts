import type { HistoryFacts } from './history-facts.js';
import { firstMatch, rulePlan, type CompiledRule } from './rule-evaluation.js';

export interface Disagreement {
  request_id: string;
  title: string;
  rule_id: string;
  would: 'approve' | 'deny';
  actual: string;
  decided_by: string | null;
}

export interface SimulationResult {
  evaluated: number;
  would: { approve: number; deny: number; dismiss: number; ask: number; no_match: number };
  /** `matched`: requests this rule was the first match of; `decided`: of those, how many it would have decided. */
  per_rule: Array<{ id: string; matched: number; decided: number; disagreed: number }>;
  disagreements: Disagreement[];
}

/** The longest list of disagreements answered; `per_rule[].disagreed` still counts them all. */
export const MAX_DISAGREEMENTS = 1000;

/** Decisions no person made: rules, auto mode, decide hooks, timeouts. */
export function decidedByPerson(decidedBy: string | null | undefined): boolean {
  if (!decidedBy) return false;
  return decidedBy !== 'rule' && decidedBy !== 'auto' && decidedBy !== 'timeout' && !decidedBy.startsWith('hook:');
}

/**
 * Replays a rule list over ended requests: what
 * each request would have become, per rule how many it would have taken, and every request a
 * rule would have decided one way that a person decided the other way: an approval a person
 * denied or that was cancelled, a deny a person approved. A rule that matches but could not
 * decide (a question, no such option) leaves the request to a person: it counts as `ask`.
 * Rules are compiled by the caller, once per run; expiry times are not applied (the question
 * is what the list would have done had it been in force).
 */
export function simulateRules(rules: readonly CompiledRule[], requests: Iterable<HistoryFacts>, maxDisagreements = MAX_DISAGREEMENTS): SimulationResult {
  const run = createSimulation(rules, maxDisagreements);
  for (const r of requests) run.add(r);
  return run.result();
}

/** The same, fed one request at a time (the caller reads history in pages). */
export function createSimulation(rules: readonly CompiledRule[], maxDisagreements = MAX_DISAGREEMENTS) {
  const would = { approve: 0, deny: 0, dismiss: 0, ask: 0, no_match: 0 };
  const perRule = new Map(rules.map((c) => [c.rule.id, { id: c.rule.id, matched: 0, decided: 0, disagreed: 0 }]));
  const disagreements: Disagreement[] = [];
  let evaluated = 0;
  return {
    add(request: HistoryFacts) {
      evaluated++;
      const matched = firstMatch(rules, request, Number.NEGATIVE_INFINITY);
      if (!matched) {
        would.no_match++;
        return;
      }
      const stats = perRule.get(matched.rule.id)!;
      stats.matched++;
      if (rulePlan(matched.rule, request).type !== 'decide') {
        would.ask++;
        return;
      }
      const action = matched.rule.action as 'approve' | 'deny' | 'dismiss';
      would[action]++;
      stats.decided++;
      if (action === 'dismiss' || !disagrees(action, request)) return;
      stats.disagreed++;
      if (disagreements.length < maxDisagreements) {
        disagreements.push({
          request_id: request.id,
          title: request.title,
          rule_id: matched.rule.id,
          would: action,
          actual: request.status,
          decided_by: request.decided_by,
        });
      }
    },
    result(): SimulationResult {
      return { evaluated, would: { ...would }, per_rule: [...perRule.values()].map((p) => ({ ...p })), disagreements: [...disagreements] };
    },
  };
}

function disagrees(would: 'approve' | 'deny', request: HistoryFacts): boolean {
  const byPerson = decidedByPerson(request.decided_by);
  if (would === 'approve') return request.status === 'cancelled' || (request.status === 'denied' && byPerson);
  return (request.status === 'approved' || request.status === 'answered') && byPerson;
}

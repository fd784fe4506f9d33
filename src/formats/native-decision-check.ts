import type { DecisionCheck } from '../requests/request-hooks.js';
import { HANDUP_FORMAT, type FormatCatalog } from './format-catalog.js';

/**
 * A reviewer's decision on a native-format request, held to what the protocol will take
 * (`WireAdapter.checkDecision`) before it is stored: an answer the upstream would refuse is a
 * 400 `invalid_decision` naming the question, never an "answered" record the agent cannot use.
 */
export function createNativeDecisionCheck({ formats }: { formats: Pick<FormatCatalog, 'get'> }): DecisionCheck {
  return (decided) => {
    if (decided.format === HANDUP_FORMAT) return;
    formats.get(decided.format)?.checkDecision?.(decided.record, decided.nativeContext);
  };
}

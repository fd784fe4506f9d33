import { encodeHistoryFacts, historyFacts } from '../policy/history-facts.js';
import type { TerminalHook } from '../requests/request-hooks.js';

/**
 * Keeps the facts of each request as it ends, in its terminal transaction, for the history
 * simulation (`POST /v1/rules/simulate`): every way a request ends takes this path.
 */
export function createHistoryFactsHook(): TerminalHook {
  return async ({ stored, at }, tx) => {
    await tx.policy.indexEnded(stored.record.id, at, encodeHistoryFacts(historyFacts(stored.record, stored.format)));
  };
}

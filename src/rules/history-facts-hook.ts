import { encodeHistoryFacts, historyFacts } from '../policy/history-facts.js';
import type { TerminalHook } from '../requests/request-hooks.js';

/**
 * Keeps the facts of each request as it ends, in its terminal transaction, for the history
 * simulation (`POST /v1/rules/simulate`): every way a request ends takes this path.
 */
export function createHistoryFactsHook(): TerminalHook {
  return async ({ stored, at }, tx) => {
    const facts = historyFacts(stored.record, stored.format);
    // Rules matched the risk the agent sent; an ask rule may have raised the record's since.
    const created = (await tx.requests.audit(stored.record.id)).find((e) => e.event === 'created');
    const sent = (created?.details as { risk_sent?: unknown } | null | undefined)?.risk_sent;
    if (typeof sent === 'string') facts.risk = sent;
    await tx.policy.indexEnded(stored.record.id, at, encodeHistoryFacts(facts));
  };
}

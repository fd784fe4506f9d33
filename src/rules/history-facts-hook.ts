import { encodeHistoryFacts, historyFacts } from '../policy/history-facts.js';
import { unattendedView } from '../requests/decision-rules.js';
import type { TerminalHook } from '../requests/request-hooks.js';

/**
 * Keeps the facts of each request as it ends, in its terminal transaction, for the history
 * simulation (`POST /v1/rules/simulate`): every way a request ends takes this path.
 */
export function createHistoryFactsHook(): TerminalHook {
  return async ({ stored, at }, tx) => {
    const created = (await tx.requests.audit(stored.record.id)).find((e) => e.event === 'created');
    const details = created?.details as { risk_sent?: unknown; person_only?: unknown } | null | undefined;
    // Rules never saw the options only a person may choose, so a replay must not either.
    const personOnly = Array.isArray(details?.person_only) ? details.person_only.filter((id): id is string => typeof id === 'string') : [];
    const facts = historyFacts(unattendedView(stored.record, personOnly), stored.format);
    // Rules matched the risk the agent sent; an ask rule may have raised the record's since.
    if (typeof details?.risk_sent === 'string') facts.risk = details.risk_sent;
    await tx.policy.indexEnded(stored.record.id, at, encodeHistoryFacts(facts));
  };
}

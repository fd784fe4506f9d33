import type { PolicyRecords } from '../policy-records.js';
import { policyState, type StateRow } from '../sql/sql-policy-records.js';

/** The methods that only read: any other call may change the state row, so it drops the copy. */
const READS = new Set<keyof PolicyRecords>(['state', 'rules', 'hits', 'ended', 'endedRecords', 'audit']);

/**
 * A transaction's policy records whose `state()` answers from the row read with its BEGIN (one
 * round trip fewer for every create, which reads it) until the transaction calls anything that
 * may write policy; then from the database again. Under READ COMMITTED the row read at BEGIN is
 * as current as one read a statement later.
 */
export function withPrefetchedPolicyState(records: PolicyRecords, row: StateRow | undefined): PolicyRecords {
  let prefetched = row;
  const out = { ...records };
  for (const key of Object.keys(records) as Array<keyof PolicyRecords>) {
    if (READS.has(key)) continue;
    const method = records[key] as (...args: unknown[]) => Promise<unknown>;
    (out as Record<string, unknown>)[key] = (...args: unknown[]) => {
      prefetched = undefined;
      return method(...args);
    };
  }
  out.state = () => (prefetched ? Promise.resolve(policyState(prefetched)) : records.state());
  return out;
}

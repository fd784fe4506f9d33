import type { PolicyRecords } from '../policy-records.js';
import { POLICY_STATE_COLUMNS, policyState, type StateRow } from '../sql/sql-policy-records.js';
import type { SqlRunner } from '../sql/sql-runner.js';

/** The policy state row with its text form, which `countersign_expect_policy_state` compares. */
export const KNOWN_STATE_SQL = `SELECT ${POLICY_STATE_COLUMNS}, p::text AS fingerprint FROM policy_state p WHERE id = 1`;

export interface KnownStateRow extends StateRow {
  fingerprint: string;
}

const CHECK_SQL = 'SELECT countersign_expect_policy_state(?)';

/** The methods that change the policy state row itself. */
const STATE_WRITES = new Set<keyof PolicyRecords>(['bumpVersion', 'setAuto', 'expireAuto', 'markHistoryIndexed']);

export interface KnownPolicyState {
  /** The row as last read, if it is still believed current. */
  readonly row: KnownStateRow | undefined;
  remember(row: KnownStateRow | undefined): void;
  forget(): void;
  /**
   * A transaction's policy records whose `state()` answers from `row` without a round trip. A
   * row this transaction did not read itself (`checked: false`) is checked where it is first
   * used: a deferred `countersign_expect_policy_state` call, which runs before any later
   * statement of the transaction and fails it (CS001) if another daemon has changed the row
   * since. Once the transaction changes the row itself, `state()` reads it from the database.
   */
  inTransaction(records: PolicyRecords, tx: Pick<SqlRunner, 'defer'>, row: KnownStateRow, checked: boolean): PolicyRecords;
}

/**
 * Every create reads the policy state row (auto mode, the rules' version), which changes rarely:
 * the PostgreSQL store keeps the row it last read instead of reading it in every transaction,
 * and each transaction that relies on it checks it in the same round trip as its COMMIT. Under
 * READ COMMITTED that check is as current as a read at BEGIN, and later than one.
 */
export function createKnownPolicyState(): KnownPolicyState {
  let known: KnownStateRow | undefined;
  return {
    get row() {
      return known;
    },
    remember(row) {
      known = row;
    },
    forget() {
      known = undefined;
    },
    inTransaction(records, tx, row, checked) {
      let current: KnownStateRow | undefined = row;
      const out = { ...records };
      for (const key of STATE_WRITES) {
        const method = records[key] as (...args: unknown[]) => Promise<unknown>;
        (out as Record<string, unknown>)[key] = (...args: unknown[]) => {
          current = undefined;
          known = undefined;
          return method(...args);
        };
      }
      out.state = async () => {
        if (!current) return records.state();
        if (!checked) {
          checked = true;
          await tx.defer(CHECK_SQL, [current.fingerprint]);
        }
        return policyState(current);
      };
      return out;
    },
  };
}

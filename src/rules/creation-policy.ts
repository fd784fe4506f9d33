import { creationVerdict, type CreationVerdict } from '../policy/creation-verdict.js';
import type { CreationPolicy } from '../requests/request-hooks.js';
import type { HandupRequest } from '../requests/request-schema.js';
import type { WriteTx } from '../storage/store.js';
import type { RuleService } from './rule-service.js';

/**
 * Policy at creation, read inside the creating transaction: the policy state row
 * (the stored rules' version and auto mode, as committed by any daemon), then the evaluation.
 */
export function createCreationPolicy({ rules }: { rules: RuleService }): CreationPolicy {
  return {
    async verdict(tx: WriteTx, record: HandupRequest, format: string, at: number, personOnly: readonly string[]): Promise<CreationVerdict> {
      const state = await tx.policy.state();
      return creationVerdict(await rules.rulesFor(tx, state.version), state.auto, record, format, at, personOnly);
    },
    hit: (tx, ruleId, at) => tx.policy.hit(ruleId, at),
  };
}

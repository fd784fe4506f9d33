import type { FollowUp } from '../adapters/adapter.js';
import type { Principal } from '../auth/principal.js';
import type { Decision, HandupRequest, Option, Outcome, Status } from '../requests/request-schema.js';

/** `decided_by` of everything a native follow-up frame resolves, and its audit actor for the admin token. */
export const UPSTREAM_ACTOR = 'upstream';

/**
 * The audit actor of a transition a follow-up frame caused: `upstream` for the admin token,
 * `upstream:<token name>` for a submit token, so the audit log says which integration claimed
 * the resolution. `decided_by` stays `upstream` either way.
 */
export function upstreamActor(principal: Principal): string {
  return principal.kind === 'admin' ? UPSTREAM_ACTOR : `${UPSTREAM_ACTOR}:${principal.name}`;
}

export function isUpstreamActor(actor: string): boolean {
  return actor === UPSTREAM_ACTOR || actor.startsWith(`${UPSTREAM_ACTOR}:`);
}

/** Follow-up outcomes that are a decision someone made (not a withdrawal or a timeout). */
export function isUpstreamDecision(status: Status): boolean {
  return status !== 'cancelled' && status !== 'expired';
}

type Resolve = Extract<FollowUp, { kind: 'resolve' }>;

const OUTCOME_OF: Partial<Record<Status, Outcome>> = { approved: 'approve', answered: 'approve', denied: 'deny' };

/**
 * The decision a follow-up frame records on a pending request: the upstream's option (its
 * outcome taken from the record's options), echoing the record's content hash. Cancelled and
 * expired carry none. When the upstream names no option of this record, the first option with
 * the outcome its status implies stands in; the upstream's own word stays in the audit row.
 */
export function upstreamDecision(record: HandupRequest, followUp: Resolve, at: number): Decision | null {
  if (followUp.status === 'cancelled' || followUp.status === 'expired') return null;
  const option = pickOption(record.options, followUp);
  return {
    option: option?.id ?? followUp.option ?? followUp.status,
    content_hash: record.content_hash,
    outcome: option?.outcome ?? OUTCOME_OF[followUp.status] ?? null,
    feedback: followUp.feedback?.trim() ? followUp.feedback : null,
    fields: (followUp.fields ?? null) as Decision['fields'],
    decided_by: UPSTREAM_ACTOR,
    decided_at: at,
  };
}

function pickOption(options: readonly Option[], followUp: Resolve): Option | undefined {
  const named = followUp.option === undefined ? undefined : options.find((o) => o.id === followUp.option);
  if (named) return named;
  const outcome = OUTCOME_OF[followUp.status];
  return outcome ? options.find((o) => o.outcome === outcome) : options[0];
}

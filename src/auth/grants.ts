import { AppError } from '../lib/errors.js';
import type { Principal } from './principal.js';

/**
 * What the admin may allow a submit token beyond creating and reading its own requests, given
 * when the token is created and never changed (a token is revoked and re-created instead):
 * - `resolve_upstream`: native follow-up frames from this token may end its requests approved,
 *   denied or answered "elsewhere" (cancel and expiry follow-ups need no grant);
 * - `timeout_approve`: its requests may say `on_timeout: approve`.
 * Without them an agent holding the token could get its own request approved with no person
 * involved. The admin token has every grant.
 */
export const GRANTS = ['resolve_upstream', 'timeout_approve'] as const;
export type Grant = (typeof GRANTS)[number];

export function hasGrant(principal: Principal, grant: Grant): boolean {
  return principal.kind === 'admin' || principal.grants.includes(grant);
}

/** Sorted and without repeats, so a token's grants have one spelling everywhere. */
export function normalizeGrants(grants: readonly Grant[]): Grant[] {
  return GRANTS.filter((g) => grants.includes(g));
}

/** "needs the <grant> grant, which token "x" does not have (…how to get it)": the end of a refusal. */
export function missingGrant(principal: Principal, grant: Grant): string {
  const who = principal.kind === 'submit' ? `token "${principal.name}"` : 'this token';
  return `needs the ${grant} grant, which ${who} does not have (the admin gives grants when creating a token: POST /v1/tokens {"name": …, "grants": ["${grant}"]})`;
}

/**
 * `on_timeout: approve` lets the clock approve a request with no person deciding, so a submit
 * token needs the `timeout_approve` grant for it: without it 403, as for an
 * upstream resolution without `resolve_upstream` (docs/api.md, Grants), naming `field`.
 */
export function requireTimeoutApprove(principal: Principal, field: string): void {
  if (hasGrant(principal, 'timeout_approve')) return;
  throw new AppError('forbidden', `${field}: "approve" ${missingGrant(principal, 'timeout_approve')}`);
}

import type { Grant } from './grants.js';

/** Who is calling: the admin (reviewer) or a named submit token with the grants the admin gave it. */
export type Principal = { kind: 'admin' } | { kind: 'submit'; tokenId: string; name: string; grants: readonly Grant[] };

export const ADMIN: Principal = Object.freeze({ kind: 'admin' });

/** The `submitter` column value: requests belong to a token id, so a re-created name starts afresh. */
export function submitterKey(p: Principal): string {
  return p.kind === 'admin' ? 'admin' : `token:${p.tokenId}`;
}

/** The audit `actor` and `decided_by` value for a principal. */
export function actorName(p: Principal): string {
  return p.kind === 'admin' ? 'admin' : `token:${p.name}`;
}

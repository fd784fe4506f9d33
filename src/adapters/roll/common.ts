import { z } from 'zod';
import { AppError } from '../../lib/errors.js';
import type { Option } from '../../requests/request-schema.js';

/** What the Roll relay frames share: UUID ids, sequences, native keys, the approve/deny options. */

/** The schema's own pattern: a version 1–8 UUID with the RFC variant, or the nil UUID. */
export const UUID = /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000)$/;
export const uuid = z.string().regex(UUID, 'must be a UUID');
/** The schema's own pattern for a runtime event's `timestamp`: an RFC 3339 date-time with a real date and an offset, seconds optional. */
export const DATE_TIME =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:Z|([+-]\d{2}:\d{2})))$/;
export const dateTime = z.string().regex(DATE_TIME, 'must be an RFC 3339 date-time with an offset');
export const sequence = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** `roll:{workspaceId}:{approval or interaction id}` (docs/formats/roll.md). */
export const nativeKey = (workspaceId: string, id: string) => `roll:${workspaceId}:${id}`;

export const APPROVE_DENY: Option[] = [
  { id: 'approve', label: 'Approve', outcome: 'approve', style: 'primary' },
  { id: 'deny', label: 'Deny', outcome: 'deny', style: 'danger' },
];

export function unsupported(what: string): never {
  throw new AppError('unsupported_frame', `${what}; countersign takes runtime.event frames carrying approval.required and interaction.request frames`);
}

/** A fresh relay request frame: the relay deduplicates on (workspaceId, requestId). */
export function relayRequest(workspaceId: string, method: string, requestId: string, params: Record<string, unknown>) {
  return { type: 'runtime.request', requestId, workspaceId, method, params };
}

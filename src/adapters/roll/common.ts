import { z } from 'zod';
import { AppError } from '../../lib/errors.js';
import type { Option } from '../../requests/request-schema.js';

/** What the Roll relay frames share: UUID ids, sequences, native keys, the approve/deny options. */

/** The schema's own pattern: a version 1–8 UUID with the RFC variant, or the nil UUID. */
export const UUID = /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000)$/;
export const uuid = z.string().regex(UUID, 'must be a UUID');
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

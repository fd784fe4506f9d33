import { z } from 'zod';
import { FORMAT_NAMES } from '../adapters/registry.js';
import { parseDuration } from '../durations.js';
import { KINDS, STATUSES, TERMINAL_STATUSES, type HandupRequest } from '../requests/request-schema.js';

/** Shared zod pieces for route schemas (params, queries, documented responses). */

/** The `format` filter accepts exactly the registered wire formats. */
export const FORMATS = FORMAT_NAMES as unknown as readonly [string, ...string[]];

const commaSeparated = z.string().transform((s) => s.split(',').map((v) => v.trim()).filter(Boolean));

/** A comma-separated list whose every member must be one of `values`. */
export const csvOf = <T extends readonly [string, ...string[]]>(values: T) =>
  commaSeparated.pipe(z.array(z.enum(values)).min(1, `must list at least one of ${values.join(', ')}`));

export const csv = commaSeparated.pipe(z.array(z.string().max(512)).min(1));

export const limitParam = (def: number, max: number) => z.coerce.number().int().min(1).max(max).default(def);

export const IdParams = z.strictObject({ id: z.string().min(1).max(64) });

export const durationParam = z.string().refine((s) => parseDuration(s).ok, {
  message: 'must be a duration with a unit, e.g. 25s',
});

/** The longest a long-poll holds (`/wait?timeout=`, the native formats' `?wait=`); longer asks are capped. */
export const WAIT_MAX_MS = 60_000;

/** The hold of a long-poll for a validated `durationParam`, capped at WAIT_MAX_MS. */
export function waitBudget(wait: string): number {
  const r = parseDuration(wait);
  return r.ok ? Math.min(r.ms, WAIT_MAX_MS) : 0;
}

export const ListQuery = z.strictObject({
  status: csvOf(STATUSES).optional(),
  kind: csvOf(KINDS).optional(),
  format: csvOf(FORMATS).optional(),
  agent: csv.optional(),
  session: csv.optional(),
  limit: limitParam(100, 500),
});

export const HistoryQuery = z.strictObject({
  cursor: z.string().max(256).optional(),
  limit: limitParam(50, 500),
  // `auto`: decided by a rule, auto mode or a decide hook (policy.md §1), whatever the outcome.
  outcome: csvOf([...TERMINAL_STATUSES, 'auto'] as unknown as readonly [string, ...string[]]).optional(),
  kind: csvOf(KINDS).optional(),
  agent: csv.optional(),
  q: z.string().min(1).max(256).optional(),
});

export const WaitQuery = z.strictObject({ timeout: durationParam.optional() });

/** The Request record as documented in OpenAPI (the authoritative schema is handup's). */
export const RequestDoc = z
  .looseObject({
    id: z.string(),
    title: z.string(),
    kind: z.enum(KINDS),
    status: z.enum(STATUSES),
    content_hash: z.string(),
    created_at: z.number().int(),
    expires_at: z.number().int().nullable(),
    decision: z.looseObject({}).nullable(),
  })
  .describe('A handup Request record') as unknown as z.ZodType<HandupRequest>;

export const ErrorDoc = z.object({ error: z.string(), code: z.string(), details: z.unknown().optional() });

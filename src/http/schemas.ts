import { z } from 'zod';
import { parseDuration } from '../lib/durations.js';
import { NO_NUL, noNul } from '../lib/no-nul.js';
import {
  CreateRequestSchema,
  DecisionBodySchema,
  KINDS,
  ON_TIMEOUT,
  OptionSchema,
  OUTCOMES,
  PreviewInputSchema,
  QuestionSchema,
  RequestInputSchema,
  RISKS,
  SCOPES,
  SourceSchema,
  STATUSES,
  TERMINAL_STATUSES,
  type HandupRequest,
} from '../requests/request-schema.js';

/** Shared zod pieces for route schemas (params, queries, documented responses). */

const commaSeparated = z.string().transform((s) =>
  s
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean),
);

/** A comma-separated list whose every member must be one of `values`. */
export const csvOf = <T extends readonly [string, ...string[]]>(values: T) =>
  commaSeparated.pipe(z.array(z.enum(values)).min(1, `must list at least one of ${values.join(', ')}`));

export const csv = commaSeparated.pipe(z.array(z.string().max(512).refine(noNul, NO_NUL)).min(1));

/** Decimal digits only: Number() would also read "0x10", "1e1", "+5" and " 16". */
export const limitParam = (def: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, 'must be a whole number written in decimal digits')
    .transform(Number)
    .pipe(z.number().int().min(1).max(max))
    .default(def);

/** The query of a route that takes none: any parameter is a 400 naming it, never silently ignored. */
export const NoQuery = z.strictObject({});

/** An id in a path: at most 64 characters, never U+0000 (PostgreSQL's text cannot hold it: a 500, not a 404). */
export const PathId = z.string().min(1).max(64).refine(noNul, NO_NUL);
export const IdParams = z.strictObject({ id: PathId });

/** A duration in a query (`25s`, `10m`); the message says what is wrong with it (no unit, not positive). */
export const durationParam = z.string().superRefine((s, ctx) => {
  const parsed = parseDuration(s);
  if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.message });
});

/** The longest a long-poll holds (`/wait?timeout=`, the native formats' `?wait=`); longer asks are capped. */
export const WAIT_MAX_MS = 60_000;

/** The hold of a long-poll for a validated `durationParam`, capped at WAIT_MAX_MS. */
export function waitBudget(wait: string): number {
  const r = parseDuration(wait);
  return r.ok ? Math.min(r.ms, WAIT_MAX_MS) : 0;
}

/** `GET /v1/requests`: the `format` filter takes exactly `formats`, the request formats the daemon serves. */
export const listQuery = (formats: readonly string[]) =>
  z.strictObject({
    status: csvOf(STATUSES).optional(),
    kind: csvOf(KINDS).optional(),
    format: csvOf(formats as [string, ...string[]]).optional(),
    agent: csv.optional(),
    session: csv.optional(),
    limit: limitParam(100, 500),
  });

export const HistoryQuery = z.strictObject({
  cursor: z.string().max(256).optional(),
  limit: limitParam(50, 500),
  // `auto`: decided by a rule, auto mode or a decide hook, whatever the outcome.
  outcome: csvOf([...TERMINAL_STATUSES, 'auto'] as unknown as readonly [string, ...string[]]).optional(),
  kind: csvOf(KINDS).optional(),
  agent: csv.optional(),
  q: z.string().min(1).max(256).refine(noNul, NO_NUL).optional(),
});

export const WaitQuery = z.strictObject({ timeout: durationParam.optional() });

// ---- Components of the OpenAPI document (openapi.ts). `.meta({ id })` names a schema once in
// components.schemas; every route that uses the same schema object then refers to it. The
// validation schemas of request-schema.ts are named in place, so bodies refer to them too.

z.globalRegistry.add(SourceSchema, { id: 'Source' });
z.globalRegistry.add(OptionSchema, { id: 'Option' });
z.globalRegistry.add(PreviewInputSchema, { id: 'Preview' });
z.globalRegistry.add(QuestionSchema, { id: 'Question' });
z.globalRegistry.add(RequestInputSchema, { id: 'InputSpec', description: 'What a reviewer fills in: questions, feedback rule, fields' });
z.globalRegistry.add(CreateRequestSchema, {
  id: 'CreateRequest',
  description: 'A handup Request as a client sends it. Server-managed fields (id, status, content_hash, ...) may be echoed and are ignored.',
});
z.globalRegistry.add(DecisionBodySchema, {
  id: 'DecisionBody',
  description: "A reviewer's decision: the option chosen and the content_hash of what was shown.",
});

const ServedSourceDoc = z
  .object({
    integration: z.string().nullable(),
    agent: z.string().nullable(),
    session: z.string().nullable(),
    session_title: z.string().nullable().optional(),
    cwd: z.string().nullable(),
    repo: z.string().nullable(),
    branch: z.string().nullable(),
    host: z.string().nullable(),
  })
  .meta({ id: 'ServedSource', description: "Where a request comes from; `integration` is the submit token's name." });

export const DecisionDoc = z
  .object({
    option: z.string(),
    content_hash: z.string().describe('The content_hash the decision was made on'),
    outcome: z.enum(OUTCOMES).nullable(),
    feedback: z.string().nullable(),
    fields: z
      .looseObject({
        answers: z
          .record(z.string(), z.object({ selected: z.array(z.string()), text: z.string().nullable().optional() }))
          .nullable()
          .optional(),
      })
      .nullable(),
    decided_by: z.string().nullable().describe('admin, a token name, timeout, upstream, ...'),
    decided_at: z.number().int().nullable(),
    scope: z
      .string()
      .nullable()
      .optional()
      .describe(`An approval's scope: ${SCOPES.join(', ')}`),
    rule_id: z.string().nullable().optional().describe('The rule that decided (decided_by "rule"), or the rule a scoped approval created'),
  })
  .meta({ id: 'Decision' });

/** The Request record every endpoint serves (handup's Request; clients must ignore fields they do not know). */
const RequestRecordDoc = z
  .object({
    id: z.string(),
    title: z.string(),
    tool: z.string().nullable().optional(),
    callback_url: z.string().nullable(),
    summary: z.string().nullable(),
    source: ServedSourceDoc,
    kind: z.enum(KINDS),
    risk: z.enum(RISKS),
    previews: z.array(PreviewInputSchema),
    options: z.array(OptionSchema),
    input: RequestInputSchema.nullable(),
    timeout: z.string().nullable(),
    run_timeout: z.string().nullable().optional(),
    on_timeout: z.enum(ON_TIMEOUT),
    dedupe_key: z.string().nullable(),
    status: z.enum(STATUSES),
    content_hash: z.string(),
    created_at: z.number().int(),
    expires_at: z.number().int().nullable(),
    decision: DecisionDoc.nullable(),
  })
  .meta({ id: 'Request', description: 'A handup Request record' });
// The document describes what the code serves: a type error here means the two drifted apart.
export const servedRecordIsDocumented = (r: HandupRequest): z.output<typeof RequestRecordDoc> => r;
export const RequestDoc = RequestRecordDoc as unknown as z.ZodType<HandupRequest>;

export const ErrorDoc = z
  .object({
    error: z.string().describe('What went wrong, naming the field'),
    code: z.string().describe('A code of the error catalogue'),
    details: z.unknown().optional(),
  })
  .meta({ id: 'Error', description: 'Every error: {error, code, details?}' });

export const AuditEntryDoc = z
  .object({ id: z.number(), request_id: z.string(), event: z.string(), actor: z.string(), at: z.number(), details: z.unknown().optional() })
  .meta({ id: 'AuditEntry' });

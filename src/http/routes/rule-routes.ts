import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { GRANTS } from '../../auth/grants.js';
import { actorName, ADMIN, type Principal } from '../../auth/principal.js';
import type { Deps } from '../../deps.js';
import { AppError, validationError } from '../../lib/errors.js';
import { HANDUP_FORMAT } from '../../formats/format-catalog.js';
import { newId } from '../../lib/ids.js';
import { ruleMatchSchema, ruleSchemas, type StoredRuleInput } from '../../policy/rule-schema.js';
import { contentHash } from '../../requests/content-hash.js';
import { unattendedView } from '../../requests/decision-rules.js';
import type { RequestDraft } from '../../requests/request-draft.js';
import { CreateRequestSchema, type HandupRequest } from '../../requests/request-schema.js';
import type { RequestService } from '../../requests/request-service.js';
import { SIMULATION_MAX, type RuleView } from '../../rules/rule-service.js';
import { parseFormatQuery } from '../format-query.js';
import { limitParam, PathId } from '../schemas.js';
import { errors } from '../openapi.js';

const RuleDoc = z
  .looseObject({
    id: z.string(),
    source: z.enum(['config', 'stored']),
    match: z.looseObject({}),
    action: z.string(),
    hits: z.number(),
    last_hit_at: z.number().nullable(),
  })
  .describe('A rule as listed') as unknown as z.ZodType<RuleView>;

/** `POST /v1/rules/test` with a native frame: the frame, the query a submission would carry, and the token name to assume. */
const NativeTestSchema = z.strictObject({
  format: z.string().min(1).max(64),
  frame: z.unknown(),
  query: z.record(z.string(), z.string()).optional(),
  integration: z.string().min(1).max(256).optional(),
});

/** `POST /v1/rules/simulate`: a candidate rule list (default: the current one) and the window of history. */
const simulateSchema = (rule: z.ZodType<StoredRuleInput>) =>
  z.strictObject({
    rules: z.array(rule).max(1000).optional(),
    since: z.number().int().min(0).optional(),
    until: z.number().int().min(0).optional(),
    limit: z.number().int().min(1).max(SIMULATION_MAX).optional(),
  });

const RuleIdParams = z.strictObject({ id: PathId });

/** The adapter a dry run's `format` names: a field of the body, so an unknown one is a 400 naming it. */
function nativeAdapterOf(formats: Deps['formats']) {
  return (format: string) => {
    try {
      return formats.native(format);
    } catch (err) {
      if (err instanceof AppError && err.code === 'unknown_format') throw new AppError('invalid_request', `format: ${err.message}`);
      throw err;
    }
  };
}

/** The record a draft would become, never stored: what `POST /v1/rules/test` evaluates. */
function previewRecord(draft: RequestDraft, now: number): HandupRequest {
  const { timeoutMs, ...fields } = draft;
  return {
    id: newId(now),
    ...fields,
    status: 'pending',
    content_hash: contentHash(fields),
    created_at: now,
    expires_at: timeoutMs === null ? null : now + timeoutMs,
    decision: null,
  };
}

// rules/test reads either body shape in its handler: documented only.
const RuleTestBodyDoc = z
  .record(z.string(), z.unknown())
  .meta({ id: 'RuleTestBody', description: 'A request as for POST /v1/requests, or {format, frame, query?, integration?} for a native frame' });

/** The policy's rules: list, add, remove, dry runs; and the policy audit log. Admin only. */
export function registerRuleRoutes(app: FastifyInstance, deps: Deps) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { rules, intake } = deps;
  const nativeAdapter = nativeAdapterOf(deps.formats);
  // A rule's `format` matcher names one of the formats this daemon serves.
  const StoredRuleInputSchema = ruleSchemas(ruleMatchSchema(deps.formats.requestFormats())).storedInput;
  const SimulateSchema = simulateSchema(StoredRuleInputSchema);

  r.get(
    '/v1/rules',
    {
      schema: { summary: 'Every rule in evaluation order (config file first, then stored, oldest first), with hits', response: { 200: z.array(RuleDoc) } },
    },
    async () => rules.list(),
  );

  r.post(
    '/v1/rules',
    {
      config: { validationCode: 'invalid_rule' },
      schema: {
        summary: 'Store a rule at the end of the list: {id, match, action, feedback?, risk?, timeout?, expires_at?}',
        body: StoredRuleInputSchema,
        response: { 201: RuleDoc, ...errors('invalid_rule', 'rule_exists') },
      },
    },
    async (request, reply) => reply.code(201).send(await rules.add(request.body, actorName(request.principal))),
  );

  r.delete(
    '/v1/rules/:id',
    {
      config: { noBody: true },
      schema: {
        summary: 'Remove a stored rule (config rules are removed from the config file)',
        params: RuleIdParams,
        response: { 200: RuleDoc, ...errors('not_found', 'rule_in_config') },
      },
    },
    async (request) => rules.remove(request.params.id, actorName(request.principal)),
  );

  r.post(
    '/v1/rules/test',
    {
      // Either body shape is read in the handler: documented only.
      config: { openapi: { body: RuleTestBodyDoc } },
      schema: {
        summary: 'Which rule a request would meet and what it would do; stores nothing',
        description:
          'Body: a request as for POST /v1/requests (source.integration is taken as given), or {format, frame, query?, integration?} for a native frame.',
        response: {
          200: z.object({ rule: RuleDoc.nullable(), action: z.string(), would_decide: z.string().nullable(), skipped: z.string().optional() }),
          ...errors('invalid_request', 'invalid_query', 'invalid_frame', 'callback_not_allowed', 'unsupported_frame'),
        },
      },
    },
    async (request) => {
      const body = request.body;
      const now = deps.clock.now();
      // A dry run by the admin: the pretend token may do whatever a token could be granted. It is
      // the live token of that name when there is one, so a frame that token already sent (one
      // past its deadline, say) is found as the request it stored.
      const pretend = async (integration: string | null): Promise<Principal> => {
        if (!integration) return ADMIN;
        const token = await deps.store.tokens.liveByName(integration);
        return { kind: 'submit', tokenId: token?.id ?? 'rules-test', name: integration, grants: [...GRANTS] };
      };
      // The create path of every request, stopping short of the store: the record it would create.
      let personOnly: readonly string[] | undefined;
      const create: RequestService['create'] = async (draft, { format = HANDUP_FORMAT, native }) => {
        personOnly = native?.personOnly;
        const record = previewRecord(draft, now);
        return {
          stored: { record, format, submitter: 'rules-test', nativeKey: null, nativeContext: null, nativeReply: null, resolvedAt: null },
          created: true,
        };
      };
      let raw = body;
      let integration: string | undefined;
      if (typeof body === 'object' && body !== null && 'frame' in body) {
        const parsed = NativeTestSchema.safeParse(body);
        if (!parsed.success) throw validationError('invalid_request', parsed.error.issues);
        const { format, frame, query } = parsed.data;
        integration = parsed.data.integration;
        if (format !== HANDUP_FORMAT) {
          const adapter = nativeAdapter(format);
          const q = parseFormatQuery(query ?? {}, 'request');
          // A frame already stored under its native key (one past its deadline is not created
          // again) comes back as that record, without passing through `create`.
          const { stored } = await intake.submit(adapter, frame, {
            principal: await pretend(integration ?? null),
            overrides: q.overrides,
            context: q.context,
            create,
          });
          return rules.test(unattendedView(stored.record, personOnly), adapter.format);
        }
        raw = frame;
      }
      const parsed = CreateRequestSchema.safeParse(raw);
      if (!parsed.success) throw validationError('invalid_request', parsed.error.issues);
      // Without a token name to assume, the request's own source.integration is taken as given.
      const { stored } = await intake.create(parsed.data, {
        principal: await pretend(integration ?? parsed.data.source?.integration ?? null),
        format: HANDUP_FORMAT,
        create,
      });
      return rules.test(stored.record, HANDUP_FORMAT);
    },
  );

  r.post(
    '/v1/rules/simulate',
    {
      config: { validationCode: 'invalid_rule' },
      schema: {
        summary: 'Replay a rule list (default: the current one) over ended requests (default: the last 30 days, at most 100,000)',
        body: SimulateSchema,
        response: {
          200: z.object({
            evaluated: z.number(),
            would: z.object({ approve: z.number(), deny: z.number(), dismiss: z.number(), ask: z.number(), no_match: z.number() }),
            per_rule: z.array(z.object({ id: z.string(), matched: z.number(), decided: z.number(), disagreed: z.number() })),
            disagreements: z.array(
              z.object({
                request_id: z.string(),
                title: z.string(),
                rule_id: z.string(),
                would: z.string(),
                actual: z.string(),
                decided_by: z.string().nullable(),
              }),
            ),
            since: z.number(),
            until: z.number(),
          }),
          ...errors('invalid_rule'),
        },
      },
    },
    async (request) => rules.simulate(request.body),
  );

  r.get(
    '/v1/policy/audit',
    {
      schema: {
        summary: 'Changes to rules (added, removed, expired) and auto mode, newest first: who, what, when',
        querystring: z.strictObject({ limit: limitParam(100, 1000) }),
        response: {
          200: z.array(
            z.object({
              id: z.number(),
              event: z.string().describe('rule.added, rule.removed, rule.expired (a stored rule deleted at its expires_at) or auto.changed'),
              actor: z
                .string()
                .describe(
                  'who: admin, token:<name> (or the decider of a scoped approval); timeout for an expiry; countersign when a starting daemon turned auto mode off',
                ),
              at: z.number(),
              subject: z.string().nullable().describe('the rule id, for rule events'),
              details: z.unknown().optional(),
            }),
          ),
        },
      },
    },
    async (request) => deps.store.policy.audit(request.query.limit),
  );
}

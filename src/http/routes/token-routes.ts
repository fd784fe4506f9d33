import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { GRANTS } from '../../auth/grants.js';
import { TOKEN_NAME } from '../../auth/token-service.js';
import type { Deps } from '../../deps.js';
import { parseDuration } from '../../lib/durations.js';
import { errors } from '../openapi.js';

const TokenName = z.string().regex(TOKEN_NAME, 'must be 1-40 characters of a-z, 0-9 and -');
const GrantsDoc = z.array(z.enum(GRANTS)).describe('what the admin allowed this token beyond creating requests');
const TokenDoc = z
  .object({
    name: z.string(),
    created_at: z.number(),
    expires_at: z.number().nullable(),
    last_used_at: z.number().nullable().optional(),
    grants: GrantsDoc,
  })
  .meta({ id: 'Token' });

export function registerTokenRoutes(app: FastifyInstance, deps: Deps) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/v1/tokens',
    {
      schema: {
        summary: 'Create a named submit token; the secret is shown only in this answer',
        body: z.strictObject({
          name: TokenName,
          expires: z
            .string()
            .refine((s) => parseDuration(s).ok, { message: 'must be a duration such as 90d' })
            .nullable()
            .optional(),
          grants: z
            .array(z.enum(GRANTS))
            .max(GRANTS.length * 2)
            .optional(),
        }),
        response: {
          201: z.object({ name: z.string(), token: z.string(), created_at: z.number(), expires_at: z.number().nullable(), grants: GrantsDoc }),
          ...errors('token_exists'),
        },
      },
    },
    async (request, reply) => {
      const { name, expires, grants } = request.body;
      const ms = expires ? (parseDuration(expires) as { ok: true; ms: number }).ms : null;
      const t = await deps.tokens.create(name, ms, grants ?? []);
      return reply.code(201).send({ name: t.name, token: t.token, created_at: t.created_at, expires_at: t.expires_at, grants: t.grants });
    },
  );

  r.get('/v1/tokens', { schema: { summary: 'List live submit tokens (never their secrets)', response: { 200: z.array(TokenDoc) } } }, async () =>
    deps.tokens.list(),
  );

  r.get(
    '/v1/tokens/:name',
    {
      schema: {
        summary: 'Show one live submit token (never its secret)',
        params: z.strictObject({ name: TokenName }),
        response: { 200: TokenDoc, ...errors('not_found') },
      },
    },
    async (request) => deps.tokens.get(request.params.name),
  );

  r.delete(
    '/v1/tokens/:name',
    {
      config: { noBody: true },
      schema: {
        summary: 'Revoke a submit token; its requests stay, and the name can be reused by a new token',
        params: z.strictObject({ name: TokenName }),
        response: { 200: TokenDoc.extend({ revoked_at: z.number() }), ...errors('not_found') },
      },
    },
    async (request) => deps.tokens.revoke(request.params.name),
  );
}

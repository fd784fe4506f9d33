import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { parseDuration } from '../../lib/durations.js';
import { NO_NUL, noNul } from '../../lib/no-nul.js';
import { IdParams } from '../schemas.js';
import { errors } from '../openapi.js';

const MuteDoc = z.object({
  id: z.string(),
  agent: z.string().nullable(),
  session: z.string().nullable(),
  dismiss_notices: z.boolean(),
  created_at: z.number().int(),
  expires_at: z.number().int().nullable(),
});

const MuteBody = z.strictObject({
  agent: z.string().min(1).max(256).refine(noNul, NO_NUL).nullable().optional(),
  session: z.string().min(1).max(512).refine(noNul, NO_NUL).nullable().optional(),
  for: z
    .string()
    .refine((s) => parseDuration(s).ok, { message: 'must be a duration of at most one year, e.g. 1h' })
    .nullable()
    .optional(),
  dismiss_notices: z.boolean().optional(),
});

/** Mutes, admin only. A mute with neither agent nor session silences every source. */
export function registerMuteRoutes(app: FastifyInstance, deps: Deps) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/v1/mutes',
    {
      // Every field is optional, so no body at all is `{}`: a mute of every source.
      config: { optionalBody: true },
      schema: {
        summary: 'Mute a source (agent and/or session), optionally for a while',
        body: MuteBody.nullish(),
        response: { 201: MuteDoc, ...errors('invalid_request') },
      },
    },
    async (request, reply) => {
      const b = request.body ?? {};
      const forMs = b.for ? (parseDuration(b.for) as { ok: true; ms: number }).ms : null;
      const mute = await deps.mutes.create({ agent: b.agent, session: b.session, forMs, dismiss_notices: b.dismiss_notices });
      return reply.code(201).send(mute);
    },
  );

  r.get('/v1/mutes', { schema: { summary: 'Mutes in force, oldest first', response: { 200: z.array(MuteDoc) } } }, async () => deps.mutes.list());

  r.delete(
    '/v1/mutes/:id',
    {
      config: { noBody: true },
      schema: { summary: 'Remove a mute', params: IdParams, response: { 200: MuteDoc, ...errors('not_found') } },
    },
    async (request) => deps.mutes.remove(request.params.id),
  );
}

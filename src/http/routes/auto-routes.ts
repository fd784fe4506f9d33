import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorName } from '../../auth/principal.js';
import type { Deps } from '../../deps.js';
import { parseDuration } from '../../lib/durations.js';
import { AppError } from '../../lib/errors.js';
import { AUTO_MODES } from '../../policy/auto-mode.js';
import { errors } from '../openapi.js';

const AutoDoc = z.object({ mode: z.enum(AUTO_MODES), until: z.number().nullable(), set_at: z.number().nullable(), set_by: z.string().nullable() });

/** Auto mode: admin only, runtime only. */
export function registerAutoRoutes(app: FastifyInstance, deps: Deps) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get('/v1/auto', { schema: { summary: 'Auto mode now in force', response: { 200: AutoDoc } } }, async () => deps.auto.get());

  r.put(
    '/v1/auto',
    {
      schema: {
        summary: 'Set auto mode: off, low (approves new low and medium risk requests), all; for: a duration, then off',
        body: z.strictObject({
          mode: z.enum(AUTO_MODES),
          for: z
            .string()
            .refine((s) => parseDuration(s).ok, { message: 'must be a duration such as 30m or 2h, of at most one year' })
            .nullable()
            .optional(),
        }),
        response: { 200: AutoDoc, ...errors('invalid_request') },
      },
    },
    async (request) => {
      const { mode, for: forText } = request.body;
      if (forText != null && mode === 'off') throw new AppError('invalid_request', 'for: only with mode low or all (off needs no end)');
      const ms = forText == null ? null : (parseDuration(forText) as { ok: true; ms: number }).ms;
      return deps.auto.set(mode, ms, actorName(request.principal));
    },
  );
}

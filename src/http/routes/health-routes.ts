import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';

export function registerHealthRoutes(app: FastifyInstance, deps: Deps) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get('/v1/health', {
    config: { auth: 'public' },
    schema: { summary: 'Liveness and version', response: { 200: z.object({ status: z.literal('ok'), version: z.string() }) } },
  }, async () => ({ status: 'ok' as const, version: deps.version }));

  r.get('/v1/openapi.json', { schema: { summary: 'This API as an OpenAPI 3 document', hide: true } }, async () => app.swagger());
}

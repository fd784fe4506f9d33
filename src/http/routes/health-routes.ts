import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';

const HealthDoc = z.object({
  status: z.enum(['ok', 'unavailable']),
  version: z.string(),
  store: z.enum(['sqlite', 'postgres']).describe('where requests are kept'),
});

const NodeDoc = z.object({
  id: z.string(),
  version: z.string(),
  started_at: z.number().int(),
  last_seen: z.number().int().describe('Unix ms of its last heartbeat'),
  self: z.boolean().describe('the daemon that answered'),
});

export function registerHealthRoutes(app: FastifyInstance, deps: Deps) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/v1/health',
    {
      config: { auth: 'public' },
      schema: {
        summary: 'Liveness, version and the store; 503 while the database cannot be reached',
        response: { 200: HealthDoc, 503: HealthDoc },
      },
    },
    async (_request, reply) => {
      const store = deps.store.info.kind as 'sqlite' | 'postgres';
      try {
        await deps.store.ping();
        return { status: 'ok' as const, version: deps.version, store };
      } catch {
        return reply.code(503).send({ status: 'unavailable' as const, version: deps.version, store });
      }
    },
  );

  r.get(
    '/v1/cluster',
    {
      schema: {
        summary: 'The daemons sharing this store, from their heartbeats (one with SQLite)',
        response: { 200: z.object({ store: z.string(), nodes: z.array(NodeDoc) }) },
      },
    },
    async () => {
      const nodes = await deps.cluster.live();
      return { store: deps.store.info.kind, nodes: nodes.map((n) => ({ ...n, self: n.id === deps.cluster.id })) };
    },
  );

  r.get('/v1/openapi.json', { schema: { summary: 'This API as an OpenAPI 3 document', hide: true } }, async () => app.swagger());
}

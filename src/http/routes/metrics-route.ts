import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps.js';

/**
 * `GET /v1/metrics`: this daemon's metrics in the Prometheus text format (src/observe/metrics.ts),
 * for the admin token or `metrics.token`. Errors are JSON like everywhere else.
 */
export function registerMetricsRoute(app: FastifyInstance, deps: Deps) {
  app.get(
    '/v1/metrics',
    {
      config: { auth: 'metrics' },
      schema: {
        summary: "Metrics in the Prometheus text format (this daemon's own; the pending gauge is the store's)",
        response: {
          200: {
            description: 'Prometheus text exposition format 0.0.4',
            content: { 'text/plain; version=0.0.4': { schema: z.string() } },
          },
        },
      },
    },
    async (_request, reply) => {
      const text = await deps.metrics.render();
      return reply.type(deps.metrics.contentType).header('cache-control', 'no-store').send(text);
    },
  );
}

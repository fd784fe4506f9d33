import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { errors } from '../openapi.js';
import { IdParams } from '../schemas.js';

const AttemptDoc = z.object({
  n: z.number().int(),
  started_at: z.number().int(),
  status: z.number().int().nullable(),
  latency_ms: z.number().int().nullable(),
  error_class: z.string().nullable(),
  error: z.string().nullable(),
});

export const DeliveryDoc = z
  .object({
    id: z.string().describe('The delivery id, sent as webhook-id and as the body id'),
    request_id: z.string(),
    type: z.string().describe('The event: request.decided, request.expired or request.cancelled for callbacks; any hook event'),
    url: z.string(),
    state: z.enum(['pending', 'leased', 'delivered', 'failed']),
    created_at: z.number().int(),
    next_attempt_at: z.number().int().nullable(),
    finished_at: z.number().int().nullable(),
    last_error: z.string().nullable(),
    attempts: z.array(AttemptDoc),
  })
  .meta({ id: 'Delivery' });

/** Callback deliveries of one request with every attempt (docs/callbacks.md); admin only. */
export function registerDeliveryRoutes(app: FastifyInstance, deps: Deps) {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/requests/:id/deliveries',
    {
      schema: {
        summary: 'Callback deliveries of a request, oldest first, each with its attempts',
        params: IdParams,
        response: { 200: z.array(DeliveryDoc), ...errors('not_found') },
      },
    },
    async (request) => {
      const { id } = request.params;
      await deps.requests.get(id, request.principal); // 404 for an unknown id
      return deps.store.deliveries.listForRequest(id);
    },
  );
}

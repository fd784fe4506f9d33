import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../../deps.js';
import { DecisionBodySchema } from '../../requests/request-schema.js';
import { errors } from '../openapi.js';
import { IdParams, NoQuery, RequestDoc } from '../schemas.js';

export function registerDecisionRoutes(app: FastifyInstance, deps: Deps) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/v1/requests/:id/decision',
    {
      config: { validationCode: 'invalid_decision' },
      schema: {
        summary: 'Decide a pending request: {option, content_hash, feedback?, fields?, scope?}',
        params: IdParams,
        querystring: NoQuery,
        body: DecisionBodySchema,
        response: { 200: RequestDoc, ...errors('not_found', 'not_pending', 'content_hash_mismatch') },
      },
    },
    async (request) => (await deps.requests.decide(request.params.id, request.body, request.principal)).record,
  );
}

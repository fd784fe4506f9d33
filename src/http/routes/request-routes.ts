import { clientGone } from '../client-gone.js';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { stillAuthenticated } from '../still-authenticated.js';
import { HANDUP_FORMAT } from '../../formats/format-catalog.js';
import { CreateRequestSchema } from '../../requests/request-schema.js';
import { errors } from '../openapi.js';
import { admitter } from '../../auth/rate-limit.js';
import { AuditEntryDoc, IdParams, listQuery, NoQuery, RequestDoc, WaitQuery, waitBudget } from '../schemas.js';

export const WAIT_DEFAULT_MS = 25_000;

export function registerRequestRoutes(app: FastifyInstance, deps: Deps) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { requests, waiters, intake } = deps;

  r.post(
    '/v1/requests',
    {
      config: { auth: 'submit', validationCode: 'invalid_request' },
      schema: {
        summary: 'Create a request (handup Request JSON); 200 with the existing request on a dedupe hit',
        querystring: NoQuery,
        body: CreateRequestSchema,
        response: { 200: RequestDoc, 201: RequestDoc, ...errors('callback_not_allowed', 'forbidden', 'dedupe_conflict', 'rate_limited') },
      },
    },
    async (request, reply) => {
      const principal = request.principal;
      const { stored, created } = await intake.create(request.body, { principal, format: HANDUP_FORMAT, admit: admitter(deps.rateLimit, principal) });
      return reply.code(created ? 201 : 200).send(stored.record);
    },
  );

  r.get(
    '/v1/requests',
    {
      schema: { summary: 'List requests, newest first', querystring: listQuery(deps.formats.requestFormats()), response: { 200: z.array(RequestDoc) } },
    },
    async (request) => {
      const q = request.query;
      return (await requests.list(q)).map((s) => s.record);
    },
  );

  r.get(
    '/v1/requests/:id',
    {
      config: { auth: 'submit' },
      schema: { summary: 'Show one request', params: IdParams, querystring: NoQuery, response: { 200: RequestDoc, ...errors('not_found') } },
    },
    async (request) => (await requests.get(request.params.id, request.principal)).record,
  );

  r.get(
    '/v1/requests/:id/wait',
    {
      config: { auth: 'submit' },
      schema: {
        summary: 'Long-poll until the request leaves pending or the timeout passes (default 25s, max 60s)',
        params: IdParams,
        querystring: WaitQuery,
        response: { 200: RequestDoc, ...errors('not_found') },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const record = await waiters.wait(
        id,
        request.query.timeout === undefined ? WAIT_DEFAULT_MS : waitBudget(request.query.timeout),
        async () => (await requests.get(id, request.principal)).record,
        clientGone(reply),
      );
      await stillAuthenticated(deps, request)();
      return record;
    },
  );

  r.post(
    '/v1/requests/:id/cancel',
    {
      config: { auth: 'submit', noBody: true },
      schema: {
        summary: 'Cancel a pending request',
        params: IdParams,
        querystring: NoQuery,
        response: { 200: RequestDoc, ...errors('not_found', 'not_pending') },
      },
    },
    async (request) => (await requests.cancel(request.params.id, request.principal)).record,
  );

  r.get(
    '/v1/requests/:id/audit',
    {
      schema: {
        summary: 'Audit rows of a request, oldest first',
        params: IdParams,
        querystring: NoQuery,
        response: {
          200: z.array(AuditEntryDoc),
          ...errors('not_found'),
        },
      },
    },
    async (request) => requests.audit(request.params.id, request.principal),
  );
}

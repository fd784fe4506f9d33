import { clientGone } from '../client-gone.js';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Principal } from '../../auth/principal.js';
import type { Deps } from '../../deps.js';
import { stillAuthenticated, type AuthCheck } from '../still-authenticated.js';
import { AppError } from '../../lib/errors.js';
import { requireSequencedFormat, sequencedReply } from '../../formats/sequenced-reply.js';
import type { StoredRequest } from '../../storage/request-records.js';
import { FormatQuerySchema, parseFormatQuery, ReplyQuery, waitBudget } from '../format-query.js';
import { errors } from '../openapi.js';
import { admitter } from '../../auth/rate-limit.js';
import { PathId, RequestDoc } from '../schemas.js';

const FormatParams = z.strictObject({ format: z.string() });
const FormatIdParams = z.strictObject({ format: z.string(), id: PathId });

const WithReplyDoc = z
  .object({ request: RequestDoc, reply: z.unknown().describe('the native reply, or null while pending or where the protocol has none') })
  .meta({ id: 'RequestWithReply' });
// The frame's shape is the format's own; the adapter parses it (400 invalid_frame naming the field).
const NativeFrameDoc = z
  .record(z.string(), z.unknown())
  .meta({ id: 'NativeFrame', description: 'One frame of the wire format named in the path, as the agent or bridge sends it' });
const IgnoredDoc = z.object({ ignored: z.literal(true) });

/** The `{request, reply}` answer of the native-format endpoints. */
/**
 * The native-format endpoints (docs/formats/README.md): agents and bridges send frames in their own
 * protocol and read back the native reply. The frame's shape depends on `{format}`, so bodies
 * are parsed by the adapter in the handler rather than by a route schema.
 */
export function registerFormatRoutes(app: FastifyInstance, deps: Deps) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { formats, intake, requests, waiters } = deps;
  // For the document only: the handler resolves the format itself (404 unknown_format).
  const formatParam = { format: z.enum(formats.nativeFormats() as [string, ...string[]]).describe('A native wire format') };

  /** The submitter's own request of this format; anything else is indistinguishable from missing. */
  async function ownOfFormat(id: string, format: string, principal: Principal): Promise<StoredRequest> {
    const stored = await requests.get(id, principal);
    if (stored.format !== format) throw new AppError('not_found', `request ${id} not found`);
    return stored;
  }

  /** Long-polls until the request leaves pending or `ms` passes, then reads it back with its reply. */
  async function settle(id: string, ms: number, principal: Principal, gone: AbortSignal, authenticated: AuthCheck): Promise<StoredRequest> {
    await waiters.wait(id, ms, async () => (await requests.get(id, principal)).record, gone);
    await authenticated();
    return requests.get(id, principal);
  }

  r.post(
    '/v1/formats/:format/requests',
    {
      config: {
        auth: 'submit',
        validationCode: 'invalid_frame',
        ownQuery: true,
        openapi: { params: z.strictObject(formatParam), querystring: FormatQuerySchema, body: NativeFrameDoc },
      },
      schema: {
        summary: 'Submit one native frame; 200 with the same record when its native key was seen before',
        description: 'Query: timeout, on_timeout, callback_url, wait (long-poll, max 60s) and per-format context keys (e.g. session for Ask).',
        params: FormatParams,
        response: {
          200: WithReplyDoc,
          201: WithReplyDoc,
          ...errors('invalid_query', 'callback_not_allowed', 'forbidden', 'unknown_format', 'native_conflict', 'unsupported_frame', 'rate_limited'),
        },
      },
    },
    async (request, reply) => {
      const adapter = formats.native(request.params.format);
      const query = parseFormatQuery(request.query, 'request');
      const principal = request.principal;
      const admit = admitter(deps.rateLimit, principal);
      const { stored, created, replyFor } = await intake.submit(adapter, request.body, {
        principal,
        overrides: query.overrides,
        context: query.context,
        admit,
      });
      const answer =
        query.waitMs === null || stored.record.status !== 'pending'
          ? stored
          : await settle(stored.record.id, query.waitMs, principal, clientGone(reply), stillAuthenticated(deps, request));
      return reply.code(created ? 201 : 200).send({ request: answer.record, reply: replyFor(answer) });
    },
  );

  r.get(
    '/v1/formats/:format/requests/:id/reply',
    {
      config: { auth: 'submit', validationCode: 'invalid_query', openapi: { params: z.strictObject({ ...formatParam, id: z.string().min(1).max(64) }) } },
      schema: {
        summary: 'The request and its native reply (null while pending); ?wait=25s long-polls (max 60s); ?controller_seq=n numbers a PaperClip command',
        params: FormatIdParams,
        querystring: ReplyQuery,
        response: { 200: WithReplyDoc, ...errors('invalid_query', 'not_found', 'unknown_format') },
      },
    },
    async (request, reply) => {
      const { format, id } = request.params;
      const adapter = formats.native(format);
      const { wait, controller_seq: seq } = request.query;
      if (seq !== undefined) requireSequencedFormat(adapter, 'invalid_query', 'controller_seq');
      const found = await ownOfFormat(id, adapter.format, request.principal);
      const stored =
        wait === undefined || found.record.status !== 'pending'
          ? found
          : await settle(id, waitBudget(wait), request.principal, clientGone(reply), stillAuthenticated(deps, request));
      // A reply a newer rival of the session has made stale goes to nobody (currentReply).
      const current = await intake.currentReply(adapter, stored);
      if (seq === undefined || current === null) return { request: stored.record, reply: current };
      // The bridge's number goes on this rendering only; the stored reply keeps controllerSeq 1.
      return { request: stored.record, reply: sequencedReply(adapter, current, seq, deps.clock).reply };
    },
  );

  r.post(
    '/v1/formats/:format/events',
    {
      config: { auth: 'submit', validationCode: 'invalid_frame', ownQuery: true, openapi: { params: z.strictObject(formatParam), body: NativeFrameDoc } },
      schema: {
        summary: 'Apply a native follow-up frame (resolved elsewhere, cancelled, expired)',
        params: FormatParams,
        response: {
          200: z.object({
            request: RequestDoc,
            requests: z.array(RequestDoc).optional().describe('session-wide follow-ups: every request it ended, oldest first (`request` is the first)'),
          }),
          202: IgnoredDoc,
          ...errors('invalid_query', 'forbidden', 'not_found', 'unknown_format', 'unsupported_frame'),
        },
      },
    },
    async (request, reply) => {
      const adapter = formats.native(request.params.format);
      const query = parseFormatQuery(request.query, 'follow-up');
      const asked = await intake.readFollowUp(adapter, request.body, query.context, request.principal);
      const result = await intake.applyFollowUp(adapter, asked, request.principal);
      if (result.ignored) return reply.code(202).send({ ignored: true });
      const many = result.requests ? { requests: result.requests.map((s) => s.record) } : {};
      return reply.code(200).send({ request: result.stored.record, ...many });
    },
  );
}

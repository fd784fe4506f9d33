import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../deps.js';
import { AppError } from '../lib/errors.js';
import { authenticateThrottled } from '../http/auth-hook.js';
import { isSameOrigin } from '../http/same-origin.js';
import { errors } from '../http/openapi.js';

const SessionDoc = z.object({
  signed_in: z.literal(true),
  principal: z.literal('admin'),
  version: z.string(),
  /** Present when the caller is a web session: when it ends at the latest, and if unused (Unix ms). */
  expires_at: z.number().optional(),
  idle_expires_at: z.number().optional(),
});
const NewSessionDoc = SessionDoc.extend({ session: z.string(), expires_at: z.number(), idle_expires_at: z.number() });

/**
 * Sign-in for the reviewer page. The admin token goes in a JSON body (never a URL) and is
 * exchanged for a fresh session secret, which the page keeps in its tab's sessionStorage and
 * sends as `Authorization: Bearer`. No cookie is ever set: a cookie for 127.0.0.1 also goes to
 * every other port of 127.0.0.1, where any local server could replay it. Only the admin
 * token reviews, so only it can sign in; a session cannot mint another.
 */
export function registerSessionRoutes(app: FastifyInstance, deps: Deps) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/v1/session',
    {
      config: { auth: 'public', validationCode: 'invalid_request' },
      schema: {
        summary: 'Sign the web page in: exchanges the admin token for a short-lived session secret',
        body: z.strictObject({ token: z.string().trim().min(1, 'enter a token').max(1024) }),
        response: { 200: NewSessionDoc, ...errors('unauthorized', 'forbidden', 'rate_limited') },
      },
    },
    async (request, reply) => {
      // Public, so it checks the Origin itself: another site's page has no reason to sign in here.
      if (request.headers.origin !== undefined && !isSameOrigin(request)) {
        throw new AppError('forbidden', "cross-origin sign-in refused: sign in from this daemon's own page");
      }
      // Sign-in takes a secret like any route: wrong ones count against this address. Only a token
      // signs in, never a session secret.
      const { principal } = await authenticateThrottled(
        { tokens: deps.tokens, sessions: null, throttle: deps.authThrottle },
        request.body.token,
        request.ip,
        reply,
      );
      if (principal.kind !== 'admin') {
        throw new AppError('forbidden', 'this is a submit token: it can only create requests; sign in with the admin token');
      }
      const session = await deps.webSessions.create(principal);
      request.log.info({ session: session.id }, 'web session started');
      return reply.header('cache-control', 'no-store').send({
        signed_in: true as const,
        principal: 'admin' as const,
        version: deps.version,
        session: session.secret,
        expires_at: session.expiresAt,
        idle_expires_at: session.idleExpiresAt,
      });
    },
  );

  r.get(
    '/v1/session',
    {
      schema: { summary: 'Whether the caller is signed in (401 if not)', response: { 200: SessionDoc, ...errors('unauthorized') } },
    },
    async (request, reply) =>
      reply.header('cache-control', 'no-store').send({
        signed_in: true as const,
        principal: 'admin' as const,
        version: deps.version,
        ...(request.webSession ? { expires_at: request.webSession.expiresAt, idle_expires_at: request.webSession.idleExpiresAt } : {}),
      }),
  );

  r.delete(
    '/v1/session',
    {
      config: { noBody: true },
      schema: {
        summary: 'Sign the web page out: ends the session it calls with (its event streams too)',
        response: { 204: z.undefined().describe('Signed out') },
      },
    },
    async (request, reply) => {
      const id = request.webSession?.id;
      if (id !== undefined) {
        await deps.webSessions.revoke(id);
        deps.hub.endSession(id);
        request.log.info({ session: id }, 'web session ended');
      }
      return reply.code(204).send();
    },
  );
}

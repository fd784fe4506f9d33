import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { errors } from '../http/openapi.js';
import { ErrorDoc } from '../http/schemas.js';
import { clearedSessionCookie, isSameOrigin, refuseCrossOrigin, sessionCookie } from './session-cookie.js';

const SessionDoc = z.object({ signed_in: z.literal(true), principal: z.literal('admin'), version: z.string() });

/**
 * Sign-in for the reviewer page: the token goes in a JSON body (never a URL) and comes back as
 * an HttpOnly cookie. Only the admin token reviews (product.md §5), so only it can sign in.
 */
export function registerSessionRoutes(app: FastifyInstance, deps: Deps) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  // These two routes are public (they run before a session exists), so they check the Origin
  // themselves: a browser on another site must not sign this one in or out.
  const refuseForeignBrowser = (request: FastifyRequest) => {
    if (request.headers.origin !== undefined && !isSameOrigin(request)) throw refuseCrossOrigin();
  };

  r.post('/v1/session', {
    config: { auth: 'public', validationCode: 'invalid_request' },
    schema: {
      summary: 'Sign the web page in: checks the admin token and sets an HttpOnly session cookie',
      body: z.strictObject({ token: z.string().trim().min(1, 'enter a token').max(1024) }),
      response: { 200: SessionDoc, ...errors('unauthorized', 'forbidden') },
    },
  }, async (request, reply) => {
    refuseForeignBrowser(request);
    const principal = deps.tokens.authenticate(request.body.token);
    if (!principal) throw new AppError('unauthorized', 'the token is invalid, revoked or expired');
    if (principal.kind !== 'admin') {
      throw new AppError('forbidden', 'this is a submit token: it can only create requests; sign in with the admin token');
    }
    return reply
      .header('set-cookie', sessionCookie(request, request.body.token))
      .header('cache-control', 'no-store')
      .send({ signed_in: true as const, principal: 'admin' as const, version: deps.version });
  });

  r.get('/v1/session', {
    schema: { summary: 'Whether the caller is signed in (401 if not)', response: { 200: SessionDoc, 401: ErrorDoc } },
  }, async (_request, reply) => reply.header('cache-control', 'no-store').send({ signed_in: true as const, principal: 'admin' as const, version: deps.version }));

  r.delete('/v1/session', {
    config: { auth: 'public' },
    schema: { summary: 'Sign the web page out (clears the session cookie)', response: { 204: z.undefined().describe('Signed out'), 403: ErrorDoc } },
  }, async (request, reply) => {
    refuseForeignBrowser(request);
    return reply.header('set-cookie', clearedSessionCookie(request)).code(204).send();
  });
}

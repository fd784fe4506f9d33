import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthThrottle } from '../auth/auth-throttle.js';
import type { Principal } from '../auth/principal.js';
import type { TokenService } from '../auth/token-service.js';
import { AppError } from '../errors.js';
import './route-config.js';

/** The bearer secret a request carries, if any. */
export type TokenExtractor = (request: FastifyRequest) => string | undefined;

export const bearerToken: TokenExtractor = (request) => {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
};

/**
 * Checks a presented secret under the failed-authentication throttle: 429 (with Retry-After)
 * while the client's address is throttled, else the principal, or 401 counted as a failure.
 * Every place that takes a secret (the auth hook, the page's sign-in) goes through here.
 */
export function authenticateThrottled(
  { tokens, throttle }: { tokens: TokenService; throttle: AuthThrottle },
  secret: string,
  request: FastifyRequest,
  reply: FastifyReply,
): Principal {
  const wait = throttle.retryAfter(request.ip);
  if (wait > 0) {
    void reply.header('retry-after', String(wait));
    throw new AppError('rate_limited', `too many failed authentications from this address: try again in ${wait} s`);
  }
  const principal = tokens.authenticate(secret);
  if (!principal) {
    throttle.fail(request.ip);
    throw new AppError('unauthorized', 'the token is invalid, revoked or expired');
  }
  return principal;
}

/**
 * Authenticates every route but the public ones (product.md §5) before anything else runs,
 * WebSocket upgrades included. Routes are admin-only unless they say otherwise. Wrong secrets
 * are throttled per client address; a request that presents none is not a guess.
 */
export function registerAuthHook(app: FastifyInstance, auth: { tokens: TokenService; throttle: AuthThrottle }, extractors: TokenExtractor[] = [bearerToken]) {
  app.decorateRequest('principal', null as never);
  app.addHook('onRequest', async (request, reply) => {
    const level = request.routeOptions.config?.auth ?? 'admin';
    // Unknown routes fall through to the 404 handler.
    if (level === 'public' || request.routeOptions.url === undefined) return;
    let secret: string | undefined;
    for (const extract of extractors) if ((secret = extract(request))) break;
    if (!secret) throw new AppError('unauthorized', 'missing token: send Authorization: Bearer <token>');
    const principal = authenticateThrottled(auth, secret, request, reply);
    if (level === 'admin' && principal.kind !== 'admin') {
      throw new AppError('forbidden', 'a submit token cannot use this route; it needs the admin token');
    }
    request.principal = principal;
  });
}

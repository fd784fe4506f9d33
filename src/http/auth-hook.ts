import type { FastifyInstance, FastifyRequest } from 'fastify';
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
 * Authenticates every route but the public ones (product.md §5) before anything else runs,
 * WebSocket upgrades included. Routes are admin-only unless they say otherwise.
 */
export function registerAuthHook(app: FastifyInstance, tokens: TokenService, extractors: TokenExtractor[] = [bearerToken]) {
  app.decorateRequest('principal', null as never);
  app.addHook('onRequest', async (request) => {
    const level = request.routeOptions.config?.auth ?? 'admin';
    // Unknown routes fall through to the 404 handler.
    if (level === 'public' || request.routeOptions.url === undefined) return;
    let secret: string | undefined;
    for (const extract of extractors) if ((secret = extract(request))) break;
    if (!secret) throw new AppError('unauthorized', 'missing token: send Authorization: Bearer <token>');
    const principal = await tokens.authenticate(secret);
    if (!principal) throw new AppError('unauthorized', 'the token is invalid, revoked or expired');
    if (level === 'admin' && principal.kind !== 'admin') {
      throw new AppError('forbidden', 'a submit token cannot use this route; it needs the admin token');
    }
    request.principal = principal;
  });
}

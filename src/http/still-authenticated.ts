import type { FastifyRequest } from 'fastify';
import { authenticateSecret } from '../auth/authenticate-secret.js';
import type { TokenService } from '../auth/token-service.js';
import type { WebSessionService } from '../auth/web-session-service.js';
import { AppError } from '../lib/errors.js';
import { bearerToken } from './auth-hook.js';

export type AuthCheck = () => Promise<void>;

/**
 * A check that the bearer a call began with still authenticates, for the end of a long wait:
 * a token revoked or expired meanwhile (on any daemon), or a page session ended, gets `401`,
 * not the decision it was waiting for. The admin token lasts as long as the daemon.
 */
export function stillAuthenticated(deps: { tokens: TokenService; webSessions: WebSessionService }, request: FastifyRequest): AuthCheck {
  return async () => {
    if (request.principal?.kind === 'admin' && request.webSession === null) return;
    const secret = bearerToken(request);
    if (secret !== undefined && (await authenticateSecret(deps.tokens, deps.webSessions, secret)) !== null) return;
    throw new AppError('unauthorized', 'the token has been revoked or has expired since this call began');
  };
}

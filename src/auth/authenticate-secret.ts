import type { Principal } from './principal.js';
import type { TokenService } from './token-service.js';
import type { WebSession, WebSessionService } from './web-session-service.js';

export interface Authenticated {
  principal: Principal;
  /** Set when the secret was a reviewer page's session. */
  webSession: WebSession | null;
}

/** What a bearer secret is: a token (admin or submit), else a live web-page session, else nothing. */
export async function authenticateSecret(
  tokens: Pick<TokenService, 'authenticate'>,
  sessions: Pick<WebSessionService, 'authenticate'> | null,
  secret: string,
): Promise<Authenticated | null> {
  const principal = await tokens.authenticate(secret);
  if (principal) return { principal, webSession: null };
  const session = await sessions?.authenticate(secret);
  return session ? { principal: session.principal, webSession: session } : null;
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthThrottle } from '../auth/auth-throttle.js';
import { authenticateSecret, type Authenticated } from '../auth/authenticate-secret.js';
import { digestsEqual, sha256Hex } from '../auth/secrets.js';
import type { TokenService } from '../auth/token-service.js';
import type { WebSessionService } from '../auth/web-session-service.js';
import { AppError } from '../lib/errors.js';
import { routeOf } from './route-config.js';
import { isSameOrigin } from './same-origin.js';

export const bearerToken = (request: FastifyRequest): string | undefined => {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
};

export interface SecretCheck {
  tokens: Pick<TokenService, 'admin' | 'authenticate' | 'isRetired'>;
  /** The reviewer page's sessions; null where a session may not be used (signing in). */
  sessions: Pick<WebSessionService, 'authenticate'> | null;
  throttle: AuthThrottle;
}

/**
 * Checks a presented secret under the failed-authentication throttle: 429 (with Retry-After)
 * while the client's address is throttled, else who it is, or 401 counted as a failure. A
 * revoked or expired submit token is no guess: always 401, never counted, so an agent retrying
 * with one cannot lock the others at its address out. Every place that takes a secret (the auth
 * hook, the page's sign-in, the events socket's first message) goes through here.
 */
export async function authenticateThrottled(
  { tokens, sessions, throttle }: SecretCheck,
  secret: string,
  address: string,
  reply?: FastifyReply,
): Promise<Authenticated> {
  if (throttle.retryAfter(address) > 0) {
    if (await tokens.isRetired(secret)) throw retired();
    refuseThrottled(throttle, address, reply);
  }
  const found = await authenticateSecret(tokens, sessions, secret);
  if (!found) {
    if (await tokens.isRetired(secret)) throw retired();
    throttle.fail(address);
    throw new AppError('unauthorized', 'the token is invalid, revoked or expired');
  }
  return found;
}

const retired = () => new AppError('unauthorized', 'the token has been revoked or has expired');

function refuseThrottled(throttle: AuthThrottle, address: string, reply?: FastifyReply) {
  const wait = throttle.retryAfter(address);
  if (wait > 0) {
    void reply?.header('retry-after', String(wait));
    throw new AppError('rate_limited', `too many failed authentications from this address: try again in ${wait} s`);
  }
}

/**
 * Authenticates every route but the public ones before anything else runs,
 * WebSocket upgrades included. The one credential is `Authorization: Bearer`: a token (admin
 * or submit) or a reviewer page's session secret. Cookies are never read, so nothing a browser
 * sends on its own (to this port or any other) authenticates anything. Routes are admin-only
 * unless they say otherwise. Wrong secrets are throttled per client address; a request that
 * presents none is not a guess.
 */
export function registerAuthHook(app: FastifyInstance, check: SecretCheck, { metricsToken = null }: { metricsToken?: string | null } = {}) {
  const metricsDigest = metricsToken === null ? null : sha256Hex(metricsToken);
  app.decorateRequest('principal', null as never);
  app.decorateRequest('webSession', null);
  const admit = (request: FastifyRequest, level: string, found: Authenticated) => {
    // Set before the route's level is checked: the log line of a refusal names who was refused.
    request.principal = found.principal;
    request.webSession = found.webSession;
    if ((level === 'admin' || level === 'metrics') && found.principal.kind !== 'admin') {
      throw new AppError('forbidden', 'a submit token cannot use this route; it needs the admin token');
    }
  };
  // A callback hook, not an async one: the admin token needs no store read, so its requests go on
  // in the same turn; only secrets looked up in the store wait. A throw is Fastify's error path.
  app.addHook('onRequest', (request, reply, done) => {
    const route = routeOf(request);
    const config = route.config;
    const level = config?.auth ?? 'admin';
    // Unknown routes fall through to the 404 handler.
    if (level === 'public' || route.url === undefined) return done();
    const secret = bearerToken(request);
    if (!secret) {
      if (config?.firstMessageAuth && request.headers.upgrade?.toLowerCase() === 'websocket' && request.headers.origin !== undefined) {
        // Browsers cannot put a header on a WebSocket upgrade: the page's own socket opens
        // unauthenticated and must authenticate with its first message (ws/first-message-auth.ts).
        // Other sites' pages have no business opening one at all.
        if (isSameOrigin(request)) return done();
        throw new AppError('forbidden', "cross-origin WebSocket refused: only this daemon's own page may open it without a token");
      }
      throw new AppError('unauthorized', 'missing token: send Authorization: Bearer <token>');
    }
    // `metrics.token` reads the metrics and nothing else; it is no principal. Checked under the
    // same throttle, so a throttled address cannot go on guessing it.
    if (level === 'metrics' && metricsDigest !== null) {
      refuseThrottled(check.throttle, request.ip, reply);
      if (digestsEqual(sha256Hex(secret), metricsDigest)) return done();
    }
    // A throttled address goes the whole way, where a retired token is told apart from a guess.
    const admin = check.throttle.retryAfter(request.ip) === 0 ? check.tokens.admin(secret) : null;
    if (admin) {
      admit(request, level, { principal: admin, webSession: null });
      return done();
    }
    authenticateThrottled(check, secret, request.ip, reply).then((found) => {
      try {
        admit(request, level, found);
      } catch (err) {
        return done(err as Error);
      }
      done();
    }, done);
  });
}

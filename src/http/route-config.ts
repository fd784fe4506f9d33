import type { FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.js';
import type { WebSession } from '../auth/web-session-service.js';
import type { ErrorCode } from '../lib/errors.js';
import type { RouteDocs } from './openapi.js';

/**
 * Per-route settings read by the auth hook and the error handler.
 * - `auth`: `public` (no token), `submit` (admin or submit token), `admin` (admin only; the default),
 *   `metrics` (the admin token or `metrics.token`).
 * - `validationCode`: the error code a schema failure on this route is reported with.
 * - `noBody`: the route reads no body, so an empty one sent as `application/json` (many HTTP
 *   clients add that header to every call) is no body rather than a 400, as is `{}`; any other
 *   body is a 400 naming its first field.
 * - `optionalBody`: the body may be left out (empty or absent), else it is parsed as usual.
 * - `firstMessageAuth`: a WebSocket route whose browser clients (which cannot set headers on
 *   the upgrade) authenticate with their first message: an upgrade from this daemon's own page
 *   without a token is let through with no `principal`, and the route authenticates it.
 * - `openapi`: what the handler parses itself (native frames, their query), for the document
 *   only (openapi.ts); it changes nothing the route accepts.
 * - `secretPath`: the path itself is a credential (a decision link): request logs name the
 *   route pattern instead. Requests under `SECRET_PATH_PREFIX` that match no route (another
 *   method on a link) are logged by that pattern too.
 * - `ownQuery`: the handler parses its query itself (native formats, the Claude Code hook, the
 *   bridge socket); every other `/v1/` route without a query schema takes no query at all.
 */
export interface RouteConfig {
  auth?: 'public' | 'submit' | 'admin' | 'metrics';
  validationCode?: ErrorCode;
  noBody?: boolean;
  optionalBody?: boolean;
  firstMessageAuth?: boolean;
  openapi?: RouteDocs;
  secretPath?: boolean;
  ownQuery?: boolean;
}

const ROUTE = Symbol('route options');

/**
 * `request.routeOptions`, built once per request: Fastify's getter builds a new object at every
 * read, and the hooks, the body parser and the error handler each read it.
 */
export function routeOf(request: FastifyRequest): FastifyRequest['routeOptions'] {
  const held = request as FastifyRequest & { [ROUTE]?: FastifyRequest['routeOptions'] };
  return (held[ROUTE] ??= request.routeOptions);
}

/** Where decision links live: every path below it is a credential, whatever the method. */
export const SECRET_PATH_PREFIX = '/d/';

declare module 'fastify' {
  interface FastifyContextConfig extends RouteConfig {}
  interface FastifyRequest {
    principal: Principal;
    /** The reviewer page's session the request came with, if it came with one. */
    webSession: WebSession | null;
  }
}

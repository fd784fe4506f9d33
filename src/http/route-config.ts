import type { Principal } from '../auth/principal.js';
import type { ErrorCode } from '../errors.js';
import type { RouteDocs } from './openapi.js';

/**
 * Per-route settings read by the auth hook and the error handler.
 * - `auth`: `public` (no token), `submit` (admin or submit token), `admin` (admin only; the default).
 * - `validationCode`: the error code a schema failure on this route is reported with.
 * - `noBody`: the route reads no body, so an empty one sent as `application/json` (many HTTP
 *   clients add that header to every call) is no body rather than a 400.
 * - `openapi`: what the handler parses itself (native frames, their query), for the document
 *   only (openapi.ts); it changes nothing the route accepts.
 */
export interface RouteConfig {
  auth?: 'public' | 'submit' | 'admin';
  validationCode?: ErrorCode;
  noBody?: boolean;
  openapi?: RouteDocs;
}

declare module 'fastify' {
  interface FastifyContextConfig extends RouteConfig {}
  interface FastifyRequest {
    principal: Principal;
  }
}

import type { Principal } from '../auth/principal.js';
import type { ErrorCode } from '../errors.js';

/**
 * Per-route settings read by the auth hook and the error handler.
 * - `auth`: `public` (no token), `submit` (admin or submit token), `admin` (admin only; the default).
 * - `validationCode`: the error code a schema failure on this route is reported with.
 */
export interface RouteConfig {
  auth?: 'public' | 'submit' | 'admin';
  validationCode?: ErrorCode;
}

declare module 'fastify' {
  interface FastifyContextConfig extends RouteConfig {}
  interface FastifyRequest {
    principal: Principal;
  }
}

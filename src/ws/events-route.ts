import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { authenticateThrottled } from '../http/auth-hook.js';
import { awaitFirstMessageAuth } from './first-message-auth.js';
import { upgradeRequired } from './upgrade-required.js';

/**
 * `GET /v1/events`: reviewers' WebSocket stream (admin only). API clients authenticate the
 * upgrade with `Authorization: Bearer`; the reviewer page, which cannot set that header,
 * opens it from its own origin and sends `{"type":"auth","token":"<session secret>"}` first.
 */
export function registerEventsRoute(app: FastifyInstance, deps: Deps) {
  app.route({
    method: 'GET',
    url: '/v1/events',
    config: { firstMessageAuth: true },
    schema: { summary: 'WebSocket stream of request events', hide: true },
    handler: upgradeRequired,
    wsHandler: (socket, request) => {
      if (request.principal) {
        deps.hub.add(socket, { webSessionId: request.webSession?.id ?? null, wire: request.raw.socket });
        return;
      }
      awaitFirstMessageAuth(socket, {
        // Wrong secrets count against the address like any other authentication.
        authenticate: (secret) => authenticateThrottled({ tokens: deps.tokens, sessions: deps.webSessions, throttle: deps.authThrottle }, secret, request.ip),
        clock: deps.clock,
        log: deps.log,
        onAuthenticated: (who) => deps.hub.add(socket, { webSessionId: who.webSession?.id ?? null, wire: request.raw.socket }),
      });
    },
  });
}

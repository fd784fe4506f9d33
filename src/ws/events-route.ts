import type { FastifyInstance } from 'fastify';
import { authenticateSecret } from '../auth/authenticate-secret.js';
import type { Deps } from '../deps.js';
import { awaitFirstMessageAuth } from './first-message-auth.js';

/**
 * `GET /v1/events`: reviewers' WebSocket stream (admin only). API clients authenticate the
 * upgrade with `Authorization: Bearer`; the reviewer page, which cannot set that header,
 * opens it from its own origin and sends `{"type":"auth","token":"<session secret>"}` first.
 */
export function registerEventsRoute(app: FastifyInstance, deps: Deps) {
  app.get('/v1/events', {
    websocket: true,
    config: { firstMessageAuth: true },
    schema: { summary: 'WebSocket stream of request events', hide: true },
  }, (socket, request) => {
    if (request.principal) {
      deps.hub.add(socket, { webSessionId: request.webSession?.id ?? null });
      return;
    }
    awaitFirstMessageAuth(socket, {
      authenticate: (secret) => authenticateSecret(deps.tokens, deps.webSessions, secret),
      clock: deps.clock,
      log: deps.log,
      onAuthenticated: (who) => deps.hub.add(socket, { webSessionId: who.webSession?.id ?? null }),
    });
  });
}

import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';

/** `GET /v1/events`: reviewers' WebSocket stream (admin only; auth runs on the upgrade request). */
export function registerEventsRoute(app: FastifyInstance, deps: Deps) {
  app.get('/v1/events', { websocket: true, schema: { summary: 'WebSocket stream of request events', hide: true } }, (socket) => {
    deps.hub.add(socket);
  });
}

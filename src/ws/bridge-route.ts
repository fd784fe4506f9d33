import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticateSecret } from '../auth/authenticate-secret.js';
import { requireTimeoutApprove } from '../auth/grants.js';
import type { Deps } from '../deps.js';
import { bearerToken } from '../http/auth-hook.js';
import { parseFormatQuery } from '../http/format-query.js';
import { durationMs } from '../lib/durations.js';
import { attachBridgeSocket } from './bridge-socket.js';
import { checkCallbackUrl } from '../callbacks/callback-url-policy.js';
import { upgradeRequired } from './upgrade-required.js';

const FormatParams = z.strictObject({ format: z.string() });

/** `GET /v1/formats/{format}/ws`: a bridge's WebSocket, native frames in and native replies out. */
export function registerBridgeRoute(app: FastifyInstance, deps: Deps) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { formats, intake, requests, config } = deps;

  r.route({
    method: 'GET',
    url: '/v1/formats/:format/ws',
    config: { auth: 'submit', validationCode: 'invalid_query', ownQuery: true },
    // Runs before the upgrade, so an unknown format or a bad query is a plain HTTP error.
    preValidation: async (request) => {
      const { format } = request.params as { format: string };
      formats.native(format);
      const query = parseFormatQuery(request.query, 'socket');
      // Every frame on the socket would be refused: say so before the upgrade.
      if (query.overrides.on_timeout === 'approve') requireTimeoutApprove(request.principal, 'query.on_timeout');
      if (query.overrides.callback_url !== undefined) checkCallbackUrl(query.overrides.callback_url, config.callbacks.allowlist);
    },
    // OpenAPI cannot describe a WebSocket (docs/api.md).
    schema: { summary: 'WebSocket for bridges: native frames in, native replies out', params: FormatParams, hide: true },
    handler: upgradeRequired,
    wsHandler: (socket, request) => {
      deps.metrics.bridgeOpened(socket);
      // The auth hook has checked this secret (a token, or a reviewer page's session); it is
      // checked again while the socket lasts.
      const secret = bearerToken(request)!;
      attachBridgeSocket(socket, {
        adapter: formats.native(request.params.format),
        principal: request.principal,
        query: parseFormatQuery(request.query, 'socket'),
        intake,
        requests,
        events: deps.events,
        rateLimit: deps.rateLimit,
        clock: deps.clock,
        log: deps.log.child({ module: 'bridge', format: request.params.format }),
        pingIntervalMs: durationMs(config.events.ping_interval),
        maxBufferedBytes: config.events.max_buffered_bytes,
        maxMessageBytes: config.requests.max_body_bytes,
        stillAuthenticated: async () => (await authenticateSecret(deps.tokens, deps.webSessions, secret)) !== null,
      });
    },
  });
}

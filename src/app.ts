import fastifySwagger from '@fastify/swagger';
import fastifyWebsocket from '@fastify/websocket';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import type { Deps } from './deps.js';
import { registerAuthHook } from './http/auth-hook.js';
import { clientErrorHandler } from './http/client-error-handler.js';
import { frameworkErrors, registerErrorHandler } from './http/error-handler.js';
import { hostRefusal, registerHostCheck } from './http/host-check.js';
import { registerJsonBodyParser } from './http/json-body-parser.js';
import { NoQuery } from './http/schemas.js';
import { genRequestId, registerRequestIdHeader } from './http/request-id.js';
import { RequestLogController } from './http/request-log-controller.js';
import { openApiOptions } from './http/openapi.js';
import { registerAutoRoutes } from './http/routes/auto-routes.js';
import { registerBlobRoutes } from './http/routes/blob-routes.js';
import { registerClaudeCodeHookRoute } from './http/routes/claude-code-hook-route.js';
import { registerDecisionRoutes } from './http/routes/decision-routes.js';
import { registerDeliveryRoutes } from './http/routes/delivery-routes.js';
import { registerFormatListRoute } from './http/routes/format-list-route.js';
import { registerFormatRoutes } from './http/routes/format-routes.js';
import { registerHealthRoutes } from './http/routes/health-routes.js';
import { registerHistoryRoutes } from './http/routes/history-routes.js';
import { registerHookRoutes } from './http/routes/hook-routes.js';
import { registerLinkKeyRoutes } from './http/routes/link-key-routes.js';
import { registerMetricsRoute } from './http/routes/metrics-route.js';
import { registerMuteRoutes } from './http/routes/mute-routes.js';
import { registerRequestRoutes } from './http/routes/request-routes.js';
import { registerRuleRoutes } from './http/routes/rule-routes.js';
import { registerTokenRoutes } from './http/routes/token-routes.js';
import { registerMcpRoute } from './mcp/mcp-route.js';
import { registerBodyIdleTimeout } from './http/body-idle-timeout.js';
import { registerBridgeRoute } from './ws/bridge-route.js';
import { registerEventsRoute } from './ws/events-route.js';
import { registerLinkRoutes } from './web/link-routes.js';
import { registerPageRoutes } from './web/page-routes.js';
import { registerSessionRoutes } from './web/session-routes.js';
import { CreateRequestSchema } from './requests/request-schema.js';
import { isCommonCreateBody } from './requests/create-body-fast-path.js';
import { AppError } from './lib/errors.js';

/**
 * Builds the whole HTTP/WebSocket surface without listening: tests call this directly and
 * only the CLI (server.ts) listens. Routes are listed here, top to bottom, on purpose.
 */
export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  const requestLog = new RequestLogController();
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    bodyLimit: deps.config.requests.max_body_bytes,
    // One line per request, with its id: successes at debug, 4xx at info, 5xx at error.
    logController: requestLog,
    genReqId: genRequestId,
    // Long-polls last up to 60 s; keep-alive connections must outlive them.
    keepAliveTimeout: 65_000,
    // Claude Code hook calls are held up to 10 minutes: no limit on how long a request may take.
    requestTimeout: 0,
    connectionTimeout: 0,
    forceCloseConnections: 'idle',
    // Fastify's own 503 while closing has a body of its own; ours has the one error shape.
    return503OnClosing: false,
    frameworkErrors: frameworkErrors({ hostRefusal: hostRefusal(deps.config), requestLog }),
    clientErrorHandler,
  });

  // A query parameter a route does not take is refused, as an unknown body field is (docs/api.md):
  // every API route without a query schema of its own takes none.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/v1/') && !route.schema?.querystring && !route.config?.ownQuery) route.schema = { ...route.schema, querystring: NoQuery };
  });

  // The API speaks JSON only (docs/api.md): a text/plain body is 415, not parsed as a string.
  // Scopes that take other bodies (blobs) install their own parsers.
  app.removeContentTypeParser('text/plain');
  registerJsonBodyParser(app);
  // A create body of the common shape skips zod's walk (create-body-fast-path.ts); zod decides the rest.
  app.setValidatorCompiler<z.ZodType>((route) => {
    const zodCheck = validatorCompiler(route);
    return route.schema === CreateRequestSchema ? (data: unknown) => (isCommonCreateBody(data) ? { value: data } : zodCheck(data)) : zodCheck;
  });
  // Route response schemas document the API; replies are built by our own code and sent as is.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  registerErrorHandler(app);
  registerRequestIdHeader(app);
  registerBodyIdleTimeout(app);
  // Replies that finish after shutdown began (long-polls answered by it) close their
  // connection, so a keep-alive socket does not hold the shutdown up.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (deps.waiters.closing()) void reply.header('connection', 'close');
    done(null, payload);
  });

  await app.register(fastifySwagger, openApiOptions(deps.version));
  // Bridges send native frames over WebSocket, held to the HTTP body's limit: a message over it
  // gets `countersign.error` and the socket stays open, as for any bad frame. Only one past
  // twice the limit is not read at all and closes the socket (1009), so memory stays bounded.
  await app.register(fastifyWebsocket, {
    options: { maxPayload: 2 * deps.config.requests.max_body_bytes },
    // At shutdown every socket still open (a bridge's; the events hub has closed its own) hears
    // 1001 "going away", as the reviewers' do, not a close frame without a code.
    preClose(this: FastifyInstance, done) {
      for (const client of this.websocketServer.clients) client.close(1001, 'server shutting down');
      this.websocketServer.close(() => done());
    },
  });
  // The Host check first: a request under a foreign name is refused before authentication.
  registerHostCheck(app, deps.config);
  // Then, once the daemon is closing, every call (after its id and the Host check).
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    reply.header('connection', 'close');
    done(new AppError('shutting_down', 'countersign is shutting down: try again in a moment'));
  });
  // Bearer tokens and the reviewer page's sessions, throttled per address; cookies are never read.
  registerAuthHook(app, { tokens: deps.tokens, sessions: deps.webSessions, throttle: deps.authThrottle }, { metricsToken: deps.config.metrics.token });

  registerHealthRoutes(app, deps);
  registerMetricsRoute(app, deps);
  registerRequestRoutes(app, deps);
  registerDecisionRoutes(app, deps);
  registerDeliveryRoutes(app, deps);
  registerHistoryRoutes(app, deps);
  registerBlobRoutes(app, deps);
  registerTokenRoutes(app, deps);
  registerRuleRoutes(app, deps);
  registerAutoRoutes(app, deps);
  registerEventsRoute(app, deps);
  registerFormatListRoute(app, deps);
  registerFormatRoutes(app, deps);
  registerBridgeRoute(app, deps);
  registerClaudeCodeHookRoute(app, deps);
  registerMcpRoute(app, deps);
  registerSessionRoutes(app, deps);
  registerHookRoutes(app, deps);
  registerMuteRoutes(app, deps);
  registerLinkKeyRoutes(app, deps);
  registerLinkRoutes(app, deps);
  registerPageRoutes(app);

  return app;
}

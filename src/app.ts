import fastifySwagger from '@fastify/swagger';
import fastifyWebsocket from '@fastify/websocket';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { jsonSchemaTransform, validatorCompiler } from 'fastify-type-provider-zod';
import type { Deps } from './deps.js';
import { registerAuthHook } from './http/auth-hook.js';
import { registerErrorHandler } from './http/error-handler.js';
import { registerBlobRoutes } from './http/routes/blob-routes.js';
import { registerDecisionRoutes } from './http/routes/decision-routes.js';
import { registerHealthRoutes } from './http/routes/health-routes.js';
import { registerHistoryRoutes } from './http/routes/history-routes.js';
import { registerRequestRoutes } from './http/routes/request-routes.js';
import { registerTokenRoutes } from './http/routes/token-routes.js';
import { registerEventsRoute } from './ws/events-route.js';

/**
 * Builds the whole HTTP/WebSocket surface without listening: tests call this directly and
 * only the CLI (server.ts) listens. Routes are listed here, top to bottom, on purpose.
 */
export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    bodyLimit: deps.config.requests.max_body_bytes,
    // Per-request log lines would dominate the log at agent traffic rates; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    // Long-polls last up to 60 s; keep-alive connections must outlive them.
    keepAliveTimeout: 65_000,
    forceCloseConnections: 'idle',
  });

  app.setValidatorCompiler(validatorCompiler);
  // Route response schemas document the API; replies are built by our own code and sent as is.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  registerErrorHandler(app);

  await app.register(fastifySwagger, {
    openapi: {
      info: { title: 'countersign', version: deps.version, description: 'Approval broker API (handup-compatible core)' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(fastifyWebsocket, { options: { maxPayload: 64 * 1024 } });
  registerAuthHook(app, deps.tokens);

  registerHealthRoutes(app, deps);
  registerRequestRoutes(app, deps);
  registerDecisionRoutes(app, deps);
  registerHistoryRoutes(app, deps);
  registerBlobRoutes(app, deps);
  registerTokenRoutes(app, deps);
  registerEventsRoute(app, deps);

  return app;
}

import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { actorName } from '../auth/principal.js';
import { SECRET_PATH_PREFIX } from './route-config.js';

/**
 * Fastify's per-request log lines, one per request when it completes, at a level by outcome:
 * `debug` for successes (agents poll and long-poll: at `info` these would be most of the log),
 * `info` for 4xx, `error` for 5xx and replies cut by an error. Every line carries the request's
 * `req_id` (request.log's binding). The path is logged without its query, and a route whose
 * path is a credential (a decision link) logs its pattern instead.
 */
export class RequestLogController extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'req_id' });
  }

  // The completion line says everything an "incoming" line would.
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const status = reply.statusCode;
    const level = error || status >= 500 ? 'error' : status >= 400 ? 'info' : 'debug';
    // At the default level most lines are dropped: build them only when they are written.
    if ((reply.log as Partial<Logger>).isLevelEnabled?.(level) === false) return;
    const line: Record<string, unknown> = { method: request.method, url: loggedPath(request), status, ms: Math.round(reply.elapsedTime) };
    if (request.principal) line.actor = actorName(request.principal);
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log[level](line, 'request completed');
  }
}

function loggedPath(request: FastifyRequest): string {
  if (request.routeOptions.config?.secretPath) return request.routeOptions.url ?? '';
  const path = request.url;
  // A link asked with a method no route takes (PUT, OPTIONS, …) matched nothing, but its path is still the token.
  if (path.startsWith(SECRET_PATH_PREFIX)) return `${SECRET_PATH_PREFIX}*`;
  const q = path.indexOf('?');
  return q === -1 ? path : path.slice(0, q);
}

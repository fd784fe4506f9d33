import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { actorName } from '../auth/principal.js';
import { routeOf, SECRET_PATH_PREFIX } from './route-config.js';

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
  const route = routeOf(request);
  if (route.config?.secretPath) return route.url ?? '';
  const q = request.url.indexOf('?');
  const path = q === -1 ? request.url : request.url.slice(0, q);
  // A link asked with a method no route takes (PUT, OPTIONS, …), or by a path no route matches
  // (`//d/…`, `/D/…`, `/d%2F…`, `/x/../d/…`), matched nothing, but its path still holds the token.
  if (path.startsWith(SECRET_PATH_PREFIX) || holdsLinkToken(path)) return `${SECRET_PATH_PREFIX}*`;
  return path;
}

/** A segment shaped like a decision link's token: six dot-separated base64url parts (decision-links.ts). */
const LINK_TOKEN = /(^|[/\\])[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+){5}([/\\]|$)/;

function holdsLinkToken(path: string): boolean {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // Not valid percent-encoding: read as it is.
  }
  return LINK_TOKEN.test(path) || LINK_TOKEN.test(decoded) || /^[/\\]*d([/\\]|$)/i.test(decoded.replace(/[/\\]\.{1,2}(?=[/\\])/g, '/'));
}

import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { submitterKey } from '../auth/principal.js';
import { isSameOrigin } from '../http/same-origin.js';
import { stillAuthenticated } from '../http/still-authenticated.js';
import { AppError } from '../lib/errors.js';
import { truncateBytes } from '../lib/truncate-bytes.js';

// The MCP SDK is loaded at the first call: a daemon no MCP client talks to never holds it (about
// 7 MB of heap).
let sdk: Promise<[typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js'), typeof import('./mcp-server.js')]> | undefined;
const loadSdk = () => (sdk ??= Promise.all([import('@modelcontextprotocol/sdk/server/streamableHttp.js'), import('./mcp-server.js')]));

const SESSION_HEADER = 'mcp-session-id';
const SESSION_PREFIX = 'cs1.';
/** `source.agent`'s limit, in UTF-8 bytes. */
const CLIENT_NAME_MAX_BYTES = 256;

/**
 * The transport runs stateless (no server-side sessions), so any daemon behind a load balancer
 * answers any call and a restart loses nothing. The one thing a session would remember is the
 * client's name from `initialize` (the default `source.agent`): it travels in the session id the
 * client echoes on every later call instead. It is the client's own claim either way.
 */
export function sessionIdFor(clientName: string): string {
  // A nonce tells two clients of one token apart (a cancel names a call by its JSON-RPC id, unique per client only).
  return SESSION_PREFIX + Buffer.from(JSON.stringify({ name: clientNameText(clientName), n: randomBytes(12).toString('base64url') })).toString('base64url');
}

/** The name as `source.agent` can hold it: no U+0000 (which no store column takes), at most its bytes. */
function clientNameText(name: string): string {
  return truncateBytes(name.replaceAll('\u0000', ''), CLIENT_NAME_MAX_BYTES);
}

export function clientNameFrom(sessionId: string | undefined): string | null {
  if (!sessionId?.startsWith(SESSION_PREFIX)) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(sessionId.slice(SESSION_PREFIX.length), 'base64url').toString('utf8'));
    const name = (value as { name?: unknown } | null)?.name;
    const text = typeof name === 'string' ? clientNameText(name) : '';
    return text.trim() ? text : null;
  } catch {
    return null;
  }
}

/** `clientInfo.name` of an `initialize` request in the body (a single message or a batch). */
function initializingClient(body: unknown): string | null {
  for (const m of Array.isArray(body) ? body : [body]) {
    const msg = m as { method?: unknown; params?: { clientInfo?: { name?: unknown } } } | null;
    const name = msg?.method === 'initialize' ? msg.params?.clientInfo?.name : undefined;
    if (typeof name === 'string' && name.trim()) return name;
  }
  return null;
}

type Message = { method?: unknown; id?: unknown; params?: { requestId?: unknown } } | null;
const messages = (body: unknown): Message[] => (Array.isArray(body) ? body : [body]) as Message[];

/** The ids of the JSON-RPC requests in the body (not notifications, which have none). */
function requestIds(body: unknown): unknown[] {
  return messages(body).flatMap((m) => (typeof m?.method === 'string' && m.id !== undefined && m.id !== null ? [m.id] : []));
}

/** The request ids the body's `notifications/cancelled` name. */
function cancelledIds(body: unknown): unknown[] {
  return messages(body).flatMap((m) => (m?.method === 'notifications/cancelled' && m.params?.requestId !== undefined ? [m.params.requestId] : []));
}

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * `/mcp`: the MCP server over the Streamable HTTP transport of the official SDK,
 * behind the same bearer auth as every route (submit or admin; 401 without). POST carries every
 * JSON-RPC message; there is no server-to-client stream to open (GET) nor session to end (DELETE)
 * in stateless mode, so those are 405.
 */
export function registerMcpRoute(app: FastifyInstance, deps: Deps) {
  // The calls this daemon is answering, by caller and JSON-RPC id. Each POST has a server of its
  // own (stateless), so a `notifications/cancelled` arrives on another one: it closes the call's
  // response here, which ends the call's wait and sends no result for it.
  const inFlight = new Map<string, Set<() => void>>();
  // A call is named by its caller: the token, the client's session, and its JSON-RPC id.
  const callKey = (request: FastifyRequest, id: unknown) =>
    `${submitterKey(request.principal)}\u0000${header(request, SESSION_HEADER) ?? ''}\u0000${JSON.stringify(id)}`;

  app.post(
    '/mcp',
    {
      config: { auth: 'submit', validationCode: 'invalid_request' },
      schema: { summary: 'MCP (Streamable HTTP, stateless): JSON-RPC messages in, JSON or SSE out', hide: true } as object,
    },
    async (request, reply) => {
      // Streamable HTTP: a server MUST refuse a request whose Origin is not its own (DNS rebinding).
      if (request.headers.origin !== undefined && !isSameOrigin(request)) {
        throw new AppError('forbidden', `Origin ${request.headers.origin} is not this daemon: MCP clients call it without an Origin, or from its own`);
      }
      for (const id of cancelledIds(request.body)) for (const cancel of inFlight.get(callKey(request, id)) ?? []) cancel();
      const initializing = initializingClient(request.body);
      const clientName = initializing ?? clientNameFrom(header(request, SESSION_HEADER));
      const [{ StreamableHTTPServerTransport }, { createMcpServer }] = await loadSdk();
      const server = createMcpServer({
        requests: deps.requests,
        waiters: deps.waiters,
        rateLimit: deps.rateLimit,
        intake: deps.intake,
        clock: deps.clock,
        version: deps.version,
        principal: request.principal,
        stillAuthenticated: stillAuthenticated(deps, request),
        clientName,
        logError: (err) => request.log.error({ err }, 'MCP tool call failed'),
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      reply.hijack();
      const keys = requestIds(request.body).map((id) => callKey(request, id));
      const cancel = () => void transport.close();
      for (const key of keys) {
        const calls = inFlight.get(key) ?? new Set();
        inFlight.set(key, calls.add(cancel));
      }
      reply.raw.on('close', () => {
        for (const key of keys) {
          const calls = inFlight.get(key);
          calls?.delete(cancel);
          if (calls?.size === 0) inFlight.delete(key);
        }
        void transport.close();
        void server.close();
      });
      if (initializing) reply.raw.setHeader(SESSION_HEADER, sessionIdFor(initializing));
      try {
        await server.connect(transport);
        await transport.handleRequest(request.raw, reply.raw, request.body);
      } catch (err) {
        request.log.error({ err }, 'MCP request failed');
        if (!reply.raw.headersSent) {
          reply.raw
            .writeHead(500, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'internal error' }, id: null }));
        }
      }
    },
  );

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      config: { auth: 'submit' },
      schema: { hide: true } as object,
      handler: async (_request, reply) => {
        void reply.header('allow', 'POST');
        throw new AppError('method_not_allowed', `${method} /mcp is not used: this MCP server is stateless, send every message with POST`);
      },
    });
  }
}

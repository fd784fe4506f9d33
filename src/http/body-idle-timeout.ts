import type { FastifyInstance } from 'fastify';

/** How long a request body may go without a byte before its connection is cut. */
export const BODY_IDLE_MS = 30_000;

/**
 * Cuts the connection of a request whose body stalls: no byte for `idleMs` while it is being
 * received. The server has no request timeout (long-polls and Claude Code hook calls are held
 * for minutes), so without this a client that sends headers and a trickle of body, or stops
 * half way, would hold its connection, the memory of what it sent, and for a blob upload its
 * token's upload slot, for as long as it liked. The socket's idle timer runs only while the body
 * arrives: it is stopped when the body has been read, so a held answer is not cut.
 */
export function registerBodyIdleTimeout(app: FastifyInstance, idleMs: number = BODY_IDLE_MS) {
  app.addHook('onRequest', (request, _reply, done) => {
    const raw = request.raw;
    const length = raw.headers['content-length'];
    const hasBody = (length !== undefined && length !== '0') || raw.headers['transfer-encoding'] !== undefined;
    if (hasBody && !raw.complete) {
      const socket = raw.socket;
      // Nothing listens for the socket's 'timeout' past the server's own handler, which then destroys it.
      socket.setTimeout(idleMs);
      raw.once('end', () => socket.setTimeout(0));
    }
    done();
  });
}

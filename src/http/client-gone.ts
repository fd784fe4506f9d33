import type { FastifyReply } from 'fastify';

/**
 * Aborts when the client hangs up before its reply is sent: a long-poll or a held hook call
 * then stops waiting at once instead of holding its waiter until the wait runs out.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  return gone.signal;
}

import type { FastifyReply } from 'fastify';

/**
 * Aborts when the client hangs up before its reply is sent: a long-poll or a held hook call
 * then stops waiting at once instead of holding its waiter until the wait runs out. A client
 * that hung up before this was asked (while its request was being stored) has already closed
 * the response, and no 'close' event will come.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  if (reply.raw.destroyed && !reply.raw.writableFinished) {
    gone.abort();
    return gone.signal;
  }
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  return gone.signal;
}

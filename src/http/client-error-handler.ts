import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { AppError, toErrorBody } from '../lib/errors.js';

const STATUS: Record<string, [number, string, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'the request took too long to arrive'],
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'the request headers are too large'],
};

/**
 * Fastify's `clientErrorHandler`: requests Node's HTTP parser cannot read never reach a route.
 * Fastify's default logs the whole error at trace, `rawPacket` included: the raw bytes of the
 * request, Authorization and Cookie headers and all. Only the parser's code is logged here, and
 * the answer has the `{error, code}` shape of every other error.
 */
export function clientErrorHandler(this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  this.log.debug({ code: err.code }, 'malformed request refused');
  const [status, reason, message] = STATUS[err.code ?? ''] ?? [400, 'Bad Request', 'the request is not valid HTTP'];
  const body = JSON.stringify(toErrorBody(new AppError('invalid_request', message)));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

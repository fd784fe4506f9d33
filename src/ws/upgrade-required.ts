import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.js';

/**
 * The plain-HTTP handler of a WebSocket route: a GET without `Upgrade: websocket` gets the
 * usual error shape with 426 (RFC 9110 §15.5.22) rather than an empty 404, which would read as
 * "no such route". A 426 must name the protocol to switch to, in `Upgrade` (with the `upgrade`
 * connection option that field needs).
 */
export async function upgradeRequired(_request: FastifyRequest, reply: FastifyReply): Promise<never> {
  void reply.header('upgrade', 'websocket').header('connection', 'upgrade');
  throw new AppError('upgrade_required', 'this route is a WebSocket: open it with an Upgrade: websocket request');
}

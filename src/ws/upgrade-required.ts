import { AppError } from '../lib/errors.js';

/**
 * The plain-HTTP handler of a WebSocket route: a GET without `Upgrade: websocket` gets the
 * usual error shape with 426 (RFC 9110 §15.5.22) rather than an empty 404, which would read as
 * "no such route".
 */
export async function upgradeRequired(): Promise<never> {
  throw new AppError('upgrade_required', 'this route is a WebSocket: open it with an Upgrade: websocket request');
}

import type { FastifyRequest } from 'fastify';

/**
 * True when the request's Origin is this daemon (same host and port as the Host header the
 * browser sent). The scheme is not compared: behind a TLS proxy the daemon sees plain HTTP.
 */
export function isSameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  const host = request.headers.host?.toLowerCase();
  if (!origin || !host || origin === 'null') return false;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

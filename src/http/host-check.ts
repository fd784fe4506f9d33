import type { FastifyInstance, FastifyRequest } from 'fastify';
import { canonicalHost } from '../callbacks/callback-url-policy.js';
import type { Config } from '../config.js';
import { AppError } from '../lib/errors.js';
import { routeOf } from './route-config.js';

/** Bind addresses that mean "every interface": not a name anyone reaches the daemon by. */
const WILDCARDS = new Set(['0.0.0.0', '::'].map(canonicalHost));
/** Characters a Host header may hold: a name or IP literal, optionally a port. */
const HOST_HEADER = /^[A-Za-z0-9._\-:[\]]+$/;

/**
 * The names the daemon answers to: `localhost`, `127.0.0.1`, `[::1]`, the bind address (unless
 * it is a wildcard such as 0.0.0.0), `public_url`'s host and `server.allowed_hosts`, compared in
 * one canonical form, any port.
 */
export function allowedHosts(config: Pick<Config, 'host' | 'public_url' | 'server'>): Set<string> {
  const names = ['localhost', '127.0.0.1', '::1', ...config.server.allowed_hosts];
  if (!WILDCARDS.has(canonicalHost(config.host))) names.push(config.host);
  if (config.public_url) names.push(new URL(config.public_url).hostname);
  return new Set(names.map(canonicalHost));
}

/** The host part of a Host header, canonical, or undefined when it is not a plain host[:port]. */
export function hostOfHeader(header: string | undefined): string | undefined {
  if (!header || !HOST_HEADER.test(header)) return undefined;
  try {
    const url = new URL(`http://${header}/`);
    return canonicalHost(url.hostname);
  } catch {
    return undefined;
  }
}

/**
 * Refuses (421) requests whose Host header is not one of the daemon's names, before anything
 * else runs, WebSocket upgrades included. A page on another site that rebinds its own DNS name
 * to this machine sends that name as Host, so it never reaches authentication. The health check
 * answers under any name: it is public anyway, changes nothing and tells only the version, and
 * orchestrators probe it by pod or container IP.
 */
export function registerHostCheck(app: FastifyInstance, config: Pick<Config, 'host' | 'public_url' | 'server'>) {
  const refusal = hostRefusal(config);
  app.addHook('onRequest', (request, _reply, done) => {
    done(routeOf(request).url === '/v1/health' ? undefined : (refusal(request) ?? undefined));
  });
}

/** The 421 for a request whose Host header is not one of the daemon's names; null when it is. */
export function hostRefusal(config: Pick<Config, 'host' | 'public_url' | 'server'>): (request: FastifyRequest) => AppError | null {
  const allowed = allowedHosts(config);
  // Host headers already judged allowed, as sent: parsing and canonicalising one costs more than
  // the rest of a small request's routing. Bounded, since the header is the caller's to vary.
  const known = new Set<string>();
  return (request) => {
    const header = request.headers.host;
    if (header !== undefined && known.has(header)) return null;
    const host = hostOfHeader(header);
    if (host !== undefined && allowed.has(host)) {
      if (known.size < 256) known.add(header!);
      return null;
    }
    return new AppError(
      'host_not_allowed',
      `the Host header ${header === undefined ? 'is missing' : `"${header.slice(0, 100)}" is not one of this daemon's names`}: people reach countersign under localhost, the bind address, public_url's host or a name in server.allowed_hosts`,
    );
  };
}

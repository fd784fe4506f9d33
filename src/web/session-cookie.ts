import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { TokenExtractor } from '../http/auth-hook.js';

/**
 * The reviewer page's session: an HttpOnly cookie holding the token the reviewer signed in with.
 * Browsers cannot put an Authorization header on a WebSocket, so the cookie is what lets the
 * page use `/v1/events`. Keeping the token itself (not a server-side session id) means revoking
 * or rotating the token signs the browser out and a daemon restart does not.
 */
export const SESSION_COOKIE = 'countersign_session';

/** The value of cookie `name` in a `Cookie` header, if present and well-formed. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim()) || undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * `Secure` is added when the browser reached us over HTTPS, directly or through a TLS proxy
 * (X-Forwarded-Proto). Trusting that header here is safe: it can only make the cookie stricter.
 */
function cameOverHttps(request: FastifyRequest): boolean {
  if (request.protocol === 'https') return true;
  const forwarded = request.headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase();
  return first === 'https';
}

export function sessionCookie(request: FastifyRequest, token: string): string {
  // No Max-Age: the session ends with the browser session, so a shared machine forgets it.
  const attrs = [`${SESSION_COOKIE}=${encodeURIComponent(token)}`, 'Path=/', 'HttpOnly', 'SameSite=Strict'];
  if (cameOverHttps(request)) attrs.push('Secure');
  return attrs.join('; ');
}

export function clearedSessionCookie(request: FastifyRequest): string {
  const attrs = [`${SESSION_COOKIE}=`, 'Path=/', 'HttpOnly', 'SameSite=Strict', 'Max-Age=0'];
  if (cameOverHttps(request)) attrs.push('Secure');
  return attrs.join('; ');
}

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

/** Requests that change state (or open the event stream) must not ride the cookie cross-site. */
function needsOriginCheck(request: FastifyRequest): boolean {
  if (request.headers.upgrade?.toLowerCase() === 'websocket') return true;
  return request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'OPTIONS';
}

export function refuseCrossOrigin(): AppError {
  return new AppError('forbidden', 'cross-origin request refused: the session cookie only works from this daemon\'s own page (API clients send Authorization: Bearer)');
}

/**
 * Auth-hook extractor for the session cookie. SameSite=Strict already keeps the cookie off
 * cross-site requests in current browsers; the Origin check is the second lock, and the one
 * that covers WebSocket upgrades (cross-site WebSocket hijacking). Bearer requests never
 * reach this extractor when the header is present, so API clients are unaffected.
 */
export const sessionCookieToken: TokenExtractor = (request) => {
  const token = readCookie(request.headers.cookie, SESSION_COOKIE);
  if (!token) return undefined;
  if (needsOriginCheck(request) && !isSameOrigin(request)) throw refuseCrossOrigin();
  return token;
};

import { sessionSecret } from './session-secret.js';

/**
 * The REST client. Every call carries the tab's session secret as `Authorization: Bearer`,
 * and no cookies (`credentials: 'omit'`): the daemon reads none, and none should exist.
 */

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

let unauthorized = () => {};
/** Called when any API call answers 401: the session ended (sign-out elsewhere, token revoked). */
export function onUnauthorized(fn) {
  unauthorized = fn;
}

function authHeaders(headers = {}) {
  const secret = sessionSecret();
  if (secret) headers.authorization = `Bearer ${secret}`;
  return headers;
}

export async function api(method, path, body) {
  const init = { method, credentials: 'omit', cache: 'no-store', headers: authHeaders({ accept: 'application/json' }) };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'network', 'cannot reach the daemon');
  }
  if (res.status === 204) return null;
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep null and report the status below
  }
  if (!res.ok) {
    const err = new ApiError(res.status, data?.code ?? `http_${res.status}`, data?.error ?? `HTTP ${res.status}`, data?.details);
    if (res.status === 401 && path !== '/v1/session') unauthorized(err);
    throw err;
  }
  return data;
}

export const requestPath = (id, suffix = '') => `/v1/requests/${encodeURIComponent(id)}${suffix}`;
export const blobPath = (hash) => `/v1/blobs/${encodeURIComponent(hash)}`;

/** The bytes of a blob (previews stored by hash). */
export async function fetchBlob(hash) {
  let res;
  try {
    res = await fetch(blobPath(hash), { credentials: 'omit', headers: authHeaders() });
  } catch {
    throw new ApiError(0, 'network', 'cannot reach the daemon');
  }
  if (!res.ok) {
    const err = new ApiError(res.status, `http_${res.status}`, `blob ${hash}: HTTP ${res.status}`);
    if (res.status === 401) unauthorized(err);
    throw err;
  }
  return res.blob();
}

import { api } from './api.js';

/**
 * Sign-in state. The token is sent once in a POST body and comes back as an HttpOnly cookie;
 * this page never stores it, and never puts it in a URL.
 */

/** True when the session cookie is valid. */
export async function checkSession() {
  try {
    await api('GET', '/v1/session');
    return true;
  } catch (err) {
    if (err.status === 401) return false;
    throw err;
  }
}

export function signIn(token) {
  return api('POST', '/v1/session', { token });
}

export function signOut() {
  return api('DELETE', '/v1/session');
}

/** What to tell the reviewer when sign-in fails. */
export function signInMessage(err) {
  if (err.status === 401) return 'That token was not accepted: it is wrong, revoked or expired.';
  if (err.status === 403) return err.message;
  if (err.status === 400) return 'Enter the admin token.';
  if (err.status === 0) return 'Cannot reach the daemon. Is it running?';
  return `Sign-in failed: ${err.message}`;
}

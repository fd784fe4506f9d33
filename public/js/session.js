import { api } from './api.js';
import { forgetSessionSecret, keepSessionSecret, sessionSecret } from './session-secret.js';

/**
 * Sign-in state. The admin token is sent once, in a POST body, and exchanged for a session
 * secret that this tab keeps (session-secret.js); the token itself is never stored, and never
 * put in a URL.
 */

/** True when this tab holds a session the daemon still accepts. */
export async function checkSession() {
  if (!sessionSecret()) return false;
  try {
    await api('GET', '/v1/session');
    return true;
  } catch (err) {
    if (err.status !== 401) throw err;
    forgetSessionSecret();
    return false;
  }
}

export async function signIn(token) {
  const answer = await api('POST', '/v1/session', { token });
  keepSessionSecret(answer.session);
  return answer;
}

/** Ends the session on the daemon (its event streams too), and forgets it here in any case. */
export async function signOut() {
  try {
    await api('DELETE', '/v1/session');
  } finally {
    forgetSessionSecret();
  }
}

/** What to tell the reviewer when sign-in fails. */
export function signInMessage(err) {
  if (err.status === 401) return 'That token was not accepted: it is wrong, revoked or expired.';
  if (err.status === 403) return err.message;
  if (err.status === 400) return 'Enter the admin token.';
  if (err.status === 0) return 'Cannot reach the daemon. Is it running?';
  return `Sign-in failed: ${err.message}`;
}

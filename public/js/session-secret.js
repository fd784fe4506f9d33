/**
 * The reviewer's session secret (from POST /v1/session), kept in this tab's sessionStorage:
 * readable only by pages of this daemon's exact origin (scheme, host and port), sent only where
 * this page sends it (an Authorization header on its own API calls, the first message on its
 * own event stream), and forgotten when the tab closes. Never a cookie: a browser sends the
 * cookies of a host to every port of that host, so any local server could collect and replay
 * it. The admin token itself is never stored.
 */

const KEY = 'countersign.session';

export function sessionSecret() {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function keepSessionSecret(secret) {
  sessionStorage.setItem(KEY, secret);
}

export function forgetSessionSecret() {
  try {
    sessionStorage.removeItem(KEY);
  } catch {
    // storage unavailable: nothing was kept
  }
}

import { sessionSecret } from './session-secret.js';

/**
 * The `/v1/events` WebSocket. A browser cannot put a header on the upgrade, so the socket's
 * first message is the session secret (`{"type":"auth","token":…}`), and nothing counts as
 * live before the daemon answers `{"type":"auth.ok"}` (a refusal closes it with 4401/4403).
 * Reconnects with capped exponential backoff (with jitter, so many tabs do not reconnect in
 * step) and resyncs on every (re)connect, because the server keeps no replay. Events that
 * arrive while the resync is in flight are held and applied after it, in order, so the listing
 * can never overwrite a newer event.
 */

const MIN_DELAY_MS = 1000;
const MAX_DELAY_MS = 30_000;

export function createLive({ onEvent, resync, onStatus, onDown }) {
  let socket = null;
  let attempt = 0;
  let timer = null;
  let running = false;
  let held = null;

  function connect() {
    clearTimeout(timer);
    timer = null;
    if (!running || socket) return;
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/events`;
    const ws = new WebSocket(url);
    socket = ws;
    onStatus(attempt === 0 ? 'connecting' : 'reconnecting');

    let authenticated = false;

    ws.addEventListener('open', () => {
      ws.send(JSON.stringify({ type: 'auth', token: sessionSecret() ?? '' }));
    });

    async function start() {
      attempt = 0;
      held = [];
      try {
        await resync();
        onStatus('live');
      } catch {
        // Without a listing the live view would be wrong: drop the socket and start over.
        ws.close();
      } finally {
        const events = held ?? [];
        held = null;
        for (const e of events) onEvent(e);
      }
    }

    ws.addEventListener('message', (e) => {
      let message;
      try {
        message = JSON.parse(e.data);
      } catch {
        return;
      }
      if (!authenticated) {
        // The first answer is auth.ok, or an error just before the daemon closes the socket.
        if (message?.type === 'auth.ok') {
          authenticated = true;
          void start();
        }
        return;
      }
      if (held) held.push(message);
      else onEvent(message);
    });

    ws.addEventListener('close', () => {
      if (socket !== ws) return;
      socket = null;
      held = null;
      if (!running) return;
      onStatus('reconnecting');
      const base = Math.min(MAX_DELAY_MS, MIN_DELAY_MS * 2 ** attempt++);
      timer = setTimeout(connect, base / 2 + Math.random() * (base / 2));
      // A socket refused (4401) or cut (session ended) may mean the session is over; let the page find out.
      onDown?.();
    });
  }

  return {
    start() {
      running = true;
      attempt = 0;
      connect();
    },
    stop() {
      running = false;
      clearTimeout(timer);
      const ws = socket;
      socket = null;
      held = null;
      ws?.close(1000, 'signed out');
      onStatus('offline');
    },
    /** Reconnect at once (the network came back, the tab became visible). */
    kick() {
      if (running && !socket) {
        attempt = 0;
        connect();
      }
    },
  };
}

import type { Writable } from 'node:stream';
import type { Logger } from 'pino';
import type WebSocket from 'ws';
import type { NotifyEvents } from '../notify/notify-events.js';
import type { RequestEvents } from '../requests/request-events.js';
import type { PolicyEvents } from '../rules/policy-events.js';
import { textFrame } from './text-frame.js';

interface Peer {
  socket: WebSocket;
  /** The upgraded connection under `socket`, written to directly (see `send`); null: `socket.send`. */
  wire: Writable | null;
  missedPongs: number;
  /** The reviewer page's session the peer authenticated with, if any. */
  webSessionId: string | null;
}

export interface EventsHubOptions {
  events: RequestEvents;
  /** Notification events also on the stream: `mutes.changed`, `request.reminder`, `request.expiring`. */
  notify?: NotifyEvents;
  log: Logger;
  pingIntervalMs: number;
  /** A peer whose unsent data passes this many bytes is cut (it resyncs with GET /v1/requests). */
  maxBufferedBytes: number;
  /** Whether a web session is still live; asked for each session peer at every ping. */
  isSessionLive?: (id: string) => Promise<boolean>;
  /**
   * How often a session peer's session is checked (which counts as use) when that must be more
   * often than the pings: within half the session's idle timeout, so an open page keeps it.
   */
  sessionCheckMs?: number;
  /** Policy changes (`rules.changed`, `auto.changed`), sent to every peer like request events. */
  policy?: PolicyEvents;
}

/** Close code for a peer whose web session ended (4000 + 401, as the first-message refusal). */
export const SESSION_ENDED_CLOSE_CODE = 4401;

/**
 * Reviewers' live stream (`/v1/events`). No replay: a peer that reconnects refetches. Pings every
 * interval; two missed pongs and the peer is dropped.
 *
 * Sending: the changes of one event-loop turn (a group commit ends many requests at once) are
 * queued and go out together on the next turn, serialised and framed once, as one buffer written
 * to each peer: a burst costs each peer one socket write, not one per event, and no per-peer
 * copy. Each peer's queue is its socket's unsent data, bounded by `maxBufferedBytes`: a peer that
 * would pass it is cut rather than buffered without bound (it resyncs with GET /v1/requests).
 */
export function createEventsHub({ events, notify, log, pingIntervalMs, maxBufferedBytes, isSessionLive, policy, sessionCheckMs }: EventsHubOptions) {
  const peers = new Set<Peer>();
  /** Messages of this turn, not sent yet. */
  let queued: Buffer[] = [];

  const offNotify = notify?.on((e) => {
    if (e.type === 'mutes.changed') broadcast({ type: e.type });
    else if (e.type === 'request.reminder' || e.type === 'request.expiring') broadcast({ type: e.type, request: e.request, format: e.format });
  });
  const offPolicy = policy?.on(({ remote: _remote, ...e }) => broadcast(e));
  const unsubscribe = events.on((e) => broadcast({ type: e.type, request: e.request, format: e.format }));

  function broadcast(payload: object) {
    if (peers.size === 0) return;
    queued.push(Buffer.from(JSON.stringify(payload)));
    // Sent on the next turn: the agent blocked on this decision (its long-poll reply, woken by
    // the same event) goes out first instead of queueing behind a write to every reviewer.
    // setImmediate callbacks run in order, so reviewers still see events in commit order.
    if (queued.length === 1) setImmediate(flush);
  }

  function flush() {
    const messages = queued;
    queued = [];
    const wire = Buffer.concat(messages.flatMap(textFrame));
    for (const peer of peers) send(peer, messages, wire);
  }

  function send(peer: Peer, messages: Buffer[], wire: Buffer) {
    const { socket } = peer;
    if (socket.readyState !== socket.OPEN) return;
    // ws counts the connection's unsent bytes in bufferedAmount, whoever wrote them. A backlog
    // past the limit is a consumer that is not keeping up; what is about to be written is not
    // (one large event, or a burst in one turn, goes to a reader with nothing left unsent).
    if (socket.bufferedAmount > maxBufferedBytes) {
      log.warn({ buffered: socket.bufferedAmount }, 'events subscriber too slow; disconnecting');
      peers.delete(peer);
      socket.terminate();
      return;
    }
    if (peer.wire) peer.wire.write(wire);
    else for (const message of messages) socket.send(message, { binary: false });
  }

  /** Ends the peer's stream once its session is over; a database hiccup keeps it until the next ping. */
  function checkSession(peer: Peer, id: string) {
    isSessionLive!(id).then(
      (live) => {
        if (!live && peers.has(peer)) endSessionPeer(peer);
      },
      (err: unknown) => log.warn({ err }, "cannot check an events subscriber's web session; checking again at the next ping"),
    );
  }

  function endSessionPeer(peer: Peer) {
    peers.delete(peer);
    peer.socket.close(SESSION_ENDED_CLOSE_CODE, 'session ended');
  }

  const pinger = setInterval(() => {
    for (const peer of peers) {
      if (peer.missedPongs >= 2) {
        peers.delete(peer);
        peer.socket.terminate();
        continue;
      }
      // A stream outlives the request that opened it: a session that expired or was revoked
      // (here or on another daemon sharing the database) ends its streams at the next ping.
      if (peer.webSessionId !== null && isSessionLive) checkSession(peer, peer.webSessionId);
      peer.missedPongs++;
      peer.socket.ping();
    }
  }, pingIntervalMs);
  pinger.unref();
  /** Checks the session of every peer that has one now, closing those that ended. */
  function checkAllSessions() {
    if (!isSessionLive) return;
    for (const peer of peers) if (peer.webSessionId !== null) checkSession(peer, peer.webSessionId);
  }

  // Sessions idle out sooner than a ping comes: checked on their own timer too.
  const checker =
    isSessionLive && sessionCheckMs !== undefined && sessionCheckMs < pingIntervalMs ? setInterval(checkAllSessions, Math.max(sessionCheckMs, 100)) : null;
  checker?.unref();

  return {
    /**
     * `wire`: the connection `socket` was upgraded on, for writing frames to directly; not used
     * when the peer negotiated an extension (compressed frames differ per peer).
     */
    add(socket: WebSocket, { webSessionId = null, wire = null }: { webSessionId?: string | null; wire?: Writable | null } = {}) {
      const peer: Peer = { socket, wire: wire && !socket.extensions ? wire : null, missedPongs: 0, webSessionId };
      peers.add(peer);
      socket.on('pong', () => (peer.missedPongs = 0));
      socket.on('close', () => peers.delete(peer));
      socket.on('error', () => peers.delete(peer));
      // Reviewers have nothing to say on this stream; inbound messages are ignored.
      socket.on('message', () => {});
    },
    size: () => peers.size,
    /** Closes the streams of a web session at once (sign-out on this daemon). */
    endSession(id: string) {
      for (const peer of peers) if (peer.webSessionId === id) endSessionPeer(peer);
    },
    /** Checks every web session with a stream now (a sign-out on another daemon), closing those that ended. */
    checkSessions: checkAllSessions,
    /** Closes every peer with 1001 (going away); used on shutdown. */
    close() {
      clearInterval(pinger);
      if (checker) clearInterval(checker);
      unsubscribe();
      offNotify?.();
      offPolicy?.();
      for (const peer of peers) peer.socket.close(1001, 'server shutting down');
      peers.clear();
    },
  };
}

export type EventsHub = ReturnType<typeof createEventsHub>;

import type { Logger } from 'pino';
import type WebSocket from 'ws';
import type { RequestEvents } from '../requests/request-events.js';
import type { PolicyEvents } from '../rules/policy-events.js';

interface Peer {
  socket: WebSocket;
  missedPongs: number;
}

export interface EventsHubOptions {
  events: RequestEvents;
  log: Logger;
  pingIntervalMs: number;
  /** A peer whose unsent data passes this many bytes is cut (it resyncs with GET /v1/requests). */
  maxBufferedBytes: number;
  /** Policy changes (`rules.changed`, `auto.changed`), sent to every peer like request events. */
  policy?: PolicyEvents;
}

/**
 * Reviewers' live stream (`/v1/events`). Each committed change is serialised once and sent to
 * every peer. No replay: a peer that reconnects refetches. Pings every interval; two missed
 * pongs and the peer is dropped. Slow consumers are cut rather than buffered without bound.
 */
export function createEventsHub({ events, log, pingIntervalMs, maxBufferedBytes, policy }: EventsHubOptions) {
  const peers = new Set<Peer>();

  function broadcast(payload: unknown) {
    if (peers.size === 0) return;
    // Encoded once: ws would otherwise convert the string to bytes again for every peer.
    const message = Buffer.from(JSON.stringify(payload));
    // Broadcast on the next turn: the agent blocked on this decision (its long-poll reply, woken
    // by the same event) goes out first instead of queueing behind a write to every reviewer.
    // setImmediate callbacks run in order, so reviewers still see events in commit order.
    setImmediate(() => {
      for (const peer of peers) send(peer, message);
    });
  }

  const unsubscribeRequests = events.on((e) => broadcast({ type: e.type, request: e.request, format: e.format }));
  const unsubscribePolicy = policy?.on(({ remote: _remote, ...e }) => broadcast(e)) ?? (() => {});
  const unsubscribe = () => {
    unsubscribeRequests();
    unsubscribePolicy();
  };

  function send(peer: Peer, message: Buffer) {
    const { socket } = peer;
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount + message.length > maxBufferedBytes) {
      log.warn({ buffered: socket.bufferedAmount }, 'events subscriber too slow; disconnecting');
      peers.delete(peer);
      socket.terminate();
      return;
    }
    socket.send(message, { binary: false });
  }

  const pinger = setInterval(() => {
    for (const peer of peers) {
      if (peer.missedPongs >= 2) {
        peers.delete(peer);
        peer.socket.terminate();
        continue;
      }
      peer.missedPongs++;
      peer.socket.ping();
    }
  }, pingIntervalMs);
  pinger.unref();

  return {
    add(socket: WebSocket) {
      const peer: Peer = { socket, missedPongs: 0 };
      peers.add(peer);
      socket.on('pong', () => (peer.missedPongs = 0));
      socket.on('close', () => peers.delete(peer));
      socket.on('error', () => peers.delete(peer));
      // Reviewers have nothing to say on this stream; inbound messages are ignored.
      socket.on('message', () => {});
    },
    size: () => peers.size,
    /** Closes every peer with 1001 (going away); used on shutdown. */
    close() {
      clearInterval(pinger);
      unsubscribe();
      for (const peer of peers) peer.socket.close(1001, 'server shutting down');
      peers.clear();
    },
  };
}

export type EventsHub = ReturnType<typeof createEventsHub>;

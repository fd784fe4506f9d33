import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { RequestEvents } from '../../src/requests/request-events.js';
import type { HandupRequest } from '../../src/requests/request-schema.js';
import { createEventsHub, type EventsHub } from '../../src/ws/events-hub.js';

/**
 * The hub's sending over real sockets: a real `ws` server hands each connection to the hub with
 * the connection it was upgraded on, as the /v1/events route does, and real `ws` clients decode
 * what arrives. Counting the writes on the server's side of each connection shows the batching.
 */
describe('events hub on real connections', () => {
  let server: Server | undefined;
  let hub: EventsHub | undefined;
  const clients: WebSocket[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.terminate();
    hub?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
  });

  async function setup({ deflate = false, maxBufferedBytes = 1 << 20 } = {}) {
    const events = new RequestEvents();
    const h = createEventsHub({ events, log: pino({ level: 'silent' }), pingIntervalMs: 3_600_000, maxBufferedBytes });
    hub = h;
    const writes: number[] = [];
    server = createServer();
    const wss = new WebSocketServer({ server, perMessageDeflate: deflate });
    wss.on('connection', (socket, req) => {
      const i = writes.push(0) - 1;
      const wire = req.socket;
      const write = wire.write.bind(wire) as (...args: unknown[]) => boolean;
      wire.write = ((...args: unknown[]) => {
        writes[i]!++;
        return write(...args);
      }) as typeof wire.write;
      h.add(socket, { wire });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `ws://127.0.0.1:${(server!.address() as AddressInfo).port}`;

    async function reviewer() {
      const socket = new WebSocket(url, { perMessageDeflate: deflate });
      clients.push(socket);
      const messages: unknown[] = [];
      socket.on('message', (data, isBinary) => {
        expect(isBinary).toBe(false);
        messages.push(JSON.parse(String(data)));
      });
      const closed = new Promise<number>((resolve) => socket.once('close', resolve));
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      await expect.poll(() => h.size()).toBe(clients.length);
      return { socket, messages, closed };
    }
    return { events, writes, reviewer };
  }

  const request = (n: number, title = `request ${n}`) => ({ id: `01KDXB5M00000000000000000${n}`, title }) as HandupRequest;

  it('sends the events of one turn to each peer in one write, in order', async () => {
    const { events, writes, reviewer } = await setup();
    const a = await reviewer();
    const b = await reviewer();
    const before = [...writes];
    for (let n = 1; n <= 5; n++) events.emit({ type: 'request.created', request: request(n), format: 'handup' });
    const expected = [1, 2, 3, 4, 5].map((n) => ({ type: 'request.created', request: request(n), format: 'handup' }));
    await expect.poll(() => a.messages.length).toBe(5);
    await expect.poll(() => b.messages.length).toBe(5);
    expect(a.messages).toEqual(expected);
    expect(b.messages).toEqual(expected);
    expect(writes.map((w, i) => w - before[i]!)).toEqual([1, 1]);

    // A later turn is a later write.
    events.emit({ type: 'request.decided', request: request(1), format: 'handup' });
    await expect.poll(() => a.messages.length).toBe(6);
    expect(writes.map((w, i) => w - before[i]!)).toEqual([2, 2]);
  });

  it.each([0, 100, 125, 126, 200, 65_535, 65_536, 100_000])('frames a message whose title is %i bytes so a real client reads it', async (size) => {
    const { events, reviewer } = await setup();
    const a = await reviewer();
    // Sizes around the frame header's length boundaries (125 / 126, 65,535 / 65,536 bytes).
    for (const delta of [-1, 0, 1]) {
      const title = 'x'.repeat(Math.max(0, size + delta));
      events.emit({ type: 'request.created', request: request(1, title), format: 'handup' });
    }
    await expect.poll(() => a.messages.length).toBe(3);
    expect(a.messages.map((m) => (m as { request: HandupRequest }).request.title.length)).toEqual([-1, 0, 1].map((d) => Math.max(0, size + d)));
  });

  it('a peer with compression negotiated gets each message compressed by ws', async () => {
    const { events, reviewer } = await setup({ deflate: true });
    const a = await reviewer();
    expect(a.socket.extensions).toContain('permessage-deflate');
    for (let n = 1; n <= 3; n++) events.emit({ type: 'request.created', request: request(n), format: 'handup' });
    await expect.poll(() => a.messages.length).toBe(3);
    expect(a.messages.map((m) => (m as { request: HandupRequest }).request.id)).toEqual([1, 2, 3].map((n) => request(n).id));
  });

  it('sends a burst that passes the limit to a peer that keeps up; cuts a peer that stopped reading once its backlog does', async () => {
    const { events, reviewer } = await setup({ maxBufferedBytes: 2_000 });
    const a = await reviewer();
    const b = await reviewer();
    // One turn's messages together pass the limit: a reader with nothing unsent gets them all.
    for (let n = 1; n <= 30; n++) events.emit({ type: 'request.created', request: request(n), format: 'handup' });
    await expect.poll(() => a.messages.length).toBe(30);
    await expect.poll(() => b.messages.length).toBe(30);
    // b stops reading: once what it has not taken passes the limit, it is cut; a goes on.
    (b.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    const big = 'x'.repeat(200_000);
    let sent = 0;
    while (hub!.size() === 2 && sent < 500) {
      events.emit({ type: 'request.created', request: request(1, big), format: 'handup' });
      sent++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(hub!.size()).toBe(1);
    await expect.poll(() => a.messages.length).toBe(30 + sent);
  });
});

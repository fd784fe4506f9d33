import { EventEmitter } from 'node:events';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RequestEvents } from '../../src/requests/request-events.js';
import type { HandupRequest } from '../../src/requests/request-schema.js';
import { createEventsHub } from '../../src/ws/events-hub.js';
import { createFakeClock } from '../helpers/fake-clock.js';
import { expectValidRequest } from '../helpers/upstream-schemas.js';
import { createRequest, decide } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

interface EventMessage {
  type: string;
  request: HandupRequest;
  format?: string;
}

/** A real `ws` client that records every message and how the connection ended. */
function connect(url: string, token: string | null, opts: WebSocket.ClientOptions = {}) {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const socket = new WebSocket(`${url}/v1/events`, { headers, ...opts });
  const messages: EventMessage[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(String(data)) as EventMessage));
  // Counted from the start: the first ping can arrive before the caller gets the socket back.
  const counts = { pings: 0 };
  socket.on('ping', () => counts.pings++);
  const opened = new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const closed = new Promise<{ code: number }>((resolve) => socket.once('close', (code) => resolve({ code })));
  const refused = new Promise<number>((resolve, reject) => {
    socket.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      socket.terminate();
    });
    socket.once('open', () => reject(new Error('the upgrade was accepted')));
  });
  refused.catch(() => {});
  opened.catch(() => {});
  return { socket, messages, counts, opened, closed, refused };
}

describe('GET /v1/events (WebSocket)', () => {
  let t: TestServer;
  const sockets: WebSocket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.terminate();
    await t?.close();
  });

  async function reviewer(opts: WebSocket.ClientOptions = {}) {
    const c = connect(t.wsUrl, t.adminToken, opts);
    sockets.push(c.socket);
    await c.opened;
    await expect.poll(() => t.server.deps.hub.size()).toBeGreaterThan(0);
    return c;
  }

  it('streams created, decided, cancelled and expired events with the full Request', async () => {
    const clock = createFakeClock();
    t = await startTestServer({}, { clock });
    const c = await reviewer();

    const a = await createRequest(t.api, { title: 'decide me' });
    const decided = (await decide(t.api, a, 'approve')).body;
    const b = await createRequest(t.api, { title: 'cancel me' });
    const cancelled = (await t.api.post(`/v1/requests/${b.id}/cancel`)).body;
    const e = await createRequest(t.api, { title: 'expire me', timeout: '1m' });
    clock.advance(60_000);
    await t.server.settled();
    const expired = (await t.api.get(`/v1/requests/${e.id}`)).body;

    await expect.poll(() => c.messages.length).toBe(6);
    expect(c.messages.map((m) => [m.type, m.request.id])).toEqual([
      ['request.created', a.id],
      ['request.decided', a.id],
      ['request.created', b.id],
      ['request.cancelled', b.id],
      ['request.created', e.id],
      ['request.expired', e.id],
    ]);
    for (const m of c.messages) {
      expectValidRequest(m.request);
      expect(m.format).toBe('handup');
    }
    expect(c.messages[0]!.request).toEqual(a);
    expect(c.messages[1]!.request).toEqual(decided);
    expect(c.messages[3]!.request).toEqual(cancelled);
    expect(c.messages[5]!.request).toEqual(expired);
    expect(expired.status).toBe('expired');
  });

  it('sends each event to every connected reviewer', async () => {
    t = await startTestServer();
    const one = await reviewer();
    const two = await reviewer();
    await expect.poll(() => t.server.deps.hub.size()).toBe(2);
    const r = await createRequest(t.api, { title: 'x' });
    await expect.poll(() => one.messages.length).toBe(1);
    await expect.poll(() => two.messages.length).toBe(1);
    expect(two.messages[0]!.request.id).toBe(r.id);
  });

  it('refuses an upgrade without a token with 401', async () => {
    t = await startTestServer();
    const c = connect(t.wsUrl, null);
    sockets.push(c.socket);
    expect(await c.refused).toBe(401);
    expect(t.server.deps.hub.size()).toBe(0);
  });

  it('refuses an upgrade with a wrong token with 401', async () => {
    t = await startTestServer();
    const c = connect(t.wsUrl, 'not-a-token-at-all');
    sockets.push(c.socket);
    expect(await c.refused).toBe(401);
  });

  it('refuses a submit token with 403', async () => {
    t = await startTestServer();
    const bot = await t.submitClient('bot');
    const c = connect(t.wsUrl, bot.token);
    sockets.push(c.socket);
    expect(await c.refused).toBe(403);
    expect(t.server.deps.hub.size()).toBe(0);
  });

  it('pings at events.ping_interval; a peer that answers stays', async () => {
    t = await startTestServer({ events: { ping_interval: '100ms' } });
    const c = await reviewer();
    await expect.poll(() => c.counts.pings, { timeout: 5_000 }).toBeGreaterThanOrEqual(4);
    expect(c.socket.readyState).toBe(WebSocket.OPEN);
    expect(t.server.deps.hub.size()).toBe(1);
  });

  it('drops a peer after two missed pongs', async () => {
    t = await startTestServer({ events: { ping_interval: '100ms' } });
    const c = await reviewer({ autoPong: false });
    const { code } = await c.closed;
    // Terminated, not closed politely: there is no close frame.
    expect(code).toBe(1006);
    expect(c.counts.pings).toBe(2);
    expect(t.server.deps.hub.size()).toBe(0);
  });

  it('sends a reader that keeps up every event, however large, and however many come at once', async () => {
    t = await startTestServer({ events: { max_buffered_bytes: 20_000 } });
    const c = await reviewer();
    const diff = (i: number) => ({ type: 'diff', inline: `--- a\n+++ b\n@@ -1 +1 @@\n-${'x'.repeat(30_000)}\n+${i}\n` });
    const created = await Promise.all(Array.from({ length: 20 }, (_, i) => createRequest(t.api, { title: `big ${i}`, previews: [diff(i)] })));
    await expect.poll(() => c.messages.length).toBe(20);
    expect(new Set(c.messages.map((m: any) => m.request.id))).toEqual(new Set(created.map((r) => r.id)));
    expect(t.server.deps.hub.size()).toBe(1);
  });

  it('closes peers with 1001 when the daemon shuts down', async () => {
    t = await startTestServer();
    const c = await reviewer();
    await t.close();
    expect((await c.closed).code).toBe(1001);
  });
});

// The hub sends on the next turn (after long-poll replies); wait for it.
const broadcast = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('events hub (fake sockets)', () => {
  /** Just enough of a ws socket for the hub: buffered bytes are set by the test. */
  class FakeSocket extends EventEmitter {
    readonly OPEN = 1;
    readyState = 1;
    bufferedAmount = 0;
    sent: string[] = [];
    terminated = false;
    pings = 0;
    send(data: Buffer | string) {
      this.sent.push(String(data));
    }
    ping() {
      this.pings++;
    }
    terminate() {
      this.terminated = true;
      this.readyState = 3;
    }
    close() {
      this.readyState = 3;
    }
  }

  const record = { id: '01KDXB5M000000000000000001', title: 'x' } as HandupRequest;

  function hubWith(maxBufferedBytes: number) {
    const events = new RequestEvents();
    const hub = createEventsHub({ events, log: pino({ level: 'silent' }), pingIntervalMs: 3_600_000, maxBufferedBytes });
    return { events, hub };
  }

  it('keeps sending to a peer under the limit and cuts the one over it, without affecting others', async () => {
    const { events, hub } = hubWith(1_000);
    const fast = new FakeSocket();
    const slow = new FakeSocket();
    hub.add(fast as unknown as WebSocket);
    hub.add(slow as unknown as WebSocket);
    events.emit({ type: 'request.created', request: record, format: 'handup' });
    await broadcast();
    expect(fast.sent).toHaveLength(1);
    expect(slow.sent).toHaveLength(1);
    // What the limit counts is the backlog already there, not what is about to be written:
    // exactly at the limit is still fine; one byte more and the peer is cut.
    slow.bufferedAmount = 1_000;
    events.emit({ type: 'request.decided', request: record, format: 'handup' });
    await broadcast();
    expect(slow.sent).toHaveLength(2);
    expect(slow.terminated).toBe(false);

    slow.bufferedAmount = 1_001;
    events.emit({ type: 'request.decided', request: record, format: 'handup' });
    await broadcast();
    expect(slow.terminated).toBe(true);
    expect(slow.sent).toHaveLength(2);
    expect(fast.sent).toHaveLength(3);
    expect(hub.size()).toBe(1);

    events.emit({ type: 'request.cancelled', request: record, format: 'handup' });
    await broadcast();
    expect(slow.sent).toHaveLength(2);
    expect(fast.sent).toHaveLength(4);
    expect(JSON.parse(fast.sent[3]!)).toEqual({ type: 'request.cancelled', request: record, format: 'handup' });
    hub.close();
  });

  it('forgets a peer that closed', () => {
    const { events, hub } = hubWith(1_000);
    const s = new FakeSocket();
    hub.add(s as unknown as WebSocket);
    s.emit('close');
    expect(hub.size()).toBe(0);
    events.emit({ type: 'request.created', request: record, format: 'handup' });
    expect(s.sent).toEqual([]);
    hub.close();
  });
});

import { connect } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { registerBodyIdleTimeout } from '../../src/http/body-idle-timeout.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** A server with the hook (idle limit `idleMs`), a route that reads its body, and one that answers after `holdMs`. */
async function serve(idleMs: number, holdMs: number): Promise<number> {
  app = Fastify({ requestTimeout: 0, connectionTimeout: 0 });
  registerBodyIdleTimeout(app, idleMs);
  app.post('/echo', async (request) => ({ got: (request.body as { n: number }).n }));
  app.post('/held', async () => {
    await new Promise((resolve) => setTimeout(resolve, holdMs));
    return { held: true };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as { port: number }).port;
}

/** Sends `head` and then `parts` with `gapMs` between them over one raw socket: what came back, and when it closed. */
function trickle(port: number, head: string, parts: string[], gapMs: number): Promise<{ reply: string; closedAfterMs: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.on('data', (d) => (reply += d.toString()));
    socket.on('close', () => resolve({ reply, closedAfterMs: Date.now() - started }));
    socket.on('error', () => {});
    socket.write(head);
    parts.forEach((part, i) => setTimeout(() => !socket.destroyed && socket.write(part), gapMs * (i + 1)));
    // A reply that came: end our side so the socket closes.
    socket.on('data', () => setTimeout(() => socket.end(), 50));
  });
}

describe('a request body that stalls', () => {
  it('has its connection cut once no byte came for the idle limit, with nothing answered', async () => {
    const port = await serve(300, 0);
    const body = '{"n": 1}';
    const head = `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const stalled = await trickle(port, head + body.slice(0, 3), [], 0);
    expect(stalled.reply).toBe('');
    expect(stalled.closedAfterMs).toBeGreaterThanOrEqual(250);
  });

  it('is not cut while bytes keep coming, however slowly in all, and a held answer after it is not cut either', async () => {
    const port = await serve(300, 900);
    const body = '{"n": 42}';
    const head = `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
    // Three bytes every 200 ms: 600 ms in all, never 300 ms without one.
    const slow = await trickle(port, head, [body.slice(0, 3), body.slice(3, 6), body.slice(6)], 200);
    expect(slow.reply).toContain('{"got":42}');
    const held = await trickle(
      port,
      `POST /held HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n`,
      ['{}'],
      100,
    );
    expect(held.reply).toContain('{"held":true}');
  });
});

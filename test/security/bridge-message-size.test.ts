import { afterEach, describe, expect, it } from 'vitest';
import { loadFixtures } from '../helpers/fixtures.js';
import { requestCount } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectWs, type WsClient } from '../helpers/ws-client.js';

/** A bridge message over `requests.max_body_bytes` is a bad frame like any other, not a dropped socket. */

const LIMIT = 4096;
const frame = () => structuredClone(loadFixtures('alp').find(([file]) => file === 'question-typed-answer.json')![1].frame);

describe('bridge messages larger than requests.max_body_bytes', () => {
  let t: TestServer;
  let bridge: WsClient | undefined;
  afterEach(async () => {
    bridge?.socket.terminate();
    await t?.close();
  });

  it('get countersign.error payload_too_large, store nothing, and the socket stays open for the next frame', async () => {
    t = await startTestServer({ requests: { max_body_bytes: LIMIT } });
    bridge = await connectWs(`${t.wsUrl}/v1/formats/alp/ws`, t.adminToken);
    const big = frame();
    big.params.event.question.text = 'x'.repeat(LIMIT);
    bridge.send(big);
    expect(await bridge.next()).toMatchObject({
      type: 'countersign.error',
      code: 'payload_too_large',
      error: expect.stringContaining('requests.max_body_bytes'),
    });
    expect(await requestCount(t.api)).toBe(0);
    bridge.send(frame());
    expect(await bridge.next()).toMatchObject({ type: 'countersign.accepted' });
    expect(await requestCount(t.api)).toBe(1);
  });

  it('a message past twice the limit is not read: the socket closes with 1009', async () => {
    t = await startTestServer({ requests: { max_body_bytes: LIMIT } });
    bridge = await connectWs(`${t.wsUrl}/v1/formats/alp/ws`, t.adminToken);
    bridge.socket.send('x'.repeat(2 * LIMIT + 1));
    expect(await bridge.closed).toBe(1009);
    expect(await requestCount(t.api)).toBe(0);
  });
});

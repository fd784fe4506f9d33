import { afterEach, describe, expect, it } from 'vitest';
import { decide, show } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectWs } from '../helpers/ws-client.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** A bridge socket is cut for a backlog it leaves unread, never for the size of one reply. */
describe('bridge socket: events.max_buffered_bytes', () => {
  it('sends a bridge that keeps up a reply larger than the limit', async () => {
    t = await startTestServer({ events: { max_buffered_bytes: 2_000 } });
    const bridge = await connectWs(`${t.wsUrl}/v1/formats/ask/ws?session=s-9`, t.adminToken);
    bridge.send({ id: 'ui_big', kind: 'user_input', status: 'pending', payload: { prompt: 'Say something long' } });
    const accepted = (await bridge.next()) as { type: string; id: string };
    expect(accepted.type).toBe('countersign.accepted');
    const record = await show(t.api, accepted.id);
    const text = 'y'.repeat(5_000);
    const res = await decide(t.api, record, record.options[0]!.id, { fields: { answers: { [record.input.questions[0].id]: { text } } } });
    expect(res.status, res.text).toBe(200);
    const reply = JSON.stringify(await bridge.next());
    expect(reply).toContain(text);
    bridge.socket.close();
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { loadFixtures } from '../helpers/fixtures.js';
import { createRequest, decide, expectError, requestCount } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectWs, type WsClient } from '../helpers/ws-client.js';

/**
 * Option and question ids are 1-64 characters of [A-Za-z0-9_.:-]
 * whatever the wire format, and HTTP bodies and bridge frames go through one JSON parser.
 */

const fixture = (format: string, name: string) => structuredClone(loadFixtures(format).find(([file]) => file === name)![1]);

describe('ids from native frames and one JSON parser', () => {
  let t: TestServer;
  const sockets: WsClient[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.socket.terminate();
    await t?.close();
  });

  it('a native frame whose ids fall outside the safe set is 400 invalid_frame naming the field, storing nothing', async () => {
    t = await startTestServer();
    const alp = fixture('alp', 'question-typed-answer.json').frame;
    alp.params.event.question.id = 'q_1 <b>x</b>';
    expectError(await t.api.post('/v1/formats/alp/requests', alp), 400, 'invalid_frame', 'input.questions[0].id');

    const paperclip = fixture('paperclip', 'v1-permission-allow.json').frame;
    paperclip.choices[0].key = 'allow"onclick="x';
    expectError(await t.api.post('/v1/formats/paperclip/requests', paperclip), 400, 'invalid_frame', 'options[0].id');

    const bridge = await connectWs(`${t.wsUrl}/v1/formats/alp/ws`, t.adminToken);
    sockets.push(bridge);
    bridge.send(alp);
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'invalid_frame', error: expect.stringContaining('input.questions[0].id') });
    expect(await requestCount(t.api)).toBe(0);
  });

  it('a "__proto__" key is refused alike over HTTP and on the bridge socket, naming where', async () => {
    t = await startTestServer();
    const raw =
      '{"jsonrpc": "2.0", "method": "event", "params": {"__proto__": {"isAdmin": true}, "sessionId": "s", "epoch": "e", "seq": 1, "ts": "t", "event": {"type": "attention"}}}';
    const http = await t.api.request('POST', '/v1/formats/alp/requests', undefined, { raw, headers: { 'content-type': 'application/json' } });
    expectError(http, 400, 'invalid_frame', 'params.__proto__');

    const bridge = await connectWs(`${t.wsUrl}/v1/formats/alp/ws`, t.adminToken);
    sockets.push(bridge);
    bridge.socket.send(raw);
    const refused = await bridge.next();
    expect(refused).toMatchObject({ type: 'countersign.error', code: 'invalid_frame' });
    expect(refused.error).toBe(http.body.error);
    // A constructor.prototype pair is refused the same way on both.
    bridge.socket.send('{"type": "question", "constructor": {"prototype": {"x": 1}}}');
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'invalid_frame', error: expect.stringContaining('constructor') });
    expect(await requestCount(t.api)).toBe(0);
  });

  it('question ids that name Object.prototype members are answered like any other', async () => {
    t = await startTestServer();
    const q = (id: string) => ({ id, question: `${id}?`, options: [{ label: 'yes' }, { label: 'no' }] });
    const r = await createRequest(t.api, { title: 'x', kind: 'question', input: { questions: [q('constructor'), q('toString')] } });
    expectError(
      await decide(t.api, r, 'submit', { fields: { answers: { constructor: { selected: ['yes'] } } } }),
      400,
      'invalid_decision',
      'fields.answers.toString',
    );
    const ok = await decide(t.api, r, 'submit', { fields: { answers: { constructor: { selected: ['yes'] }, toString: { selected: ['no'] } } } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.decision.fields.answers).toEqual({ constructor: { selected: ['yes'] }, toString: { selected: ['no'] } });
  });
});

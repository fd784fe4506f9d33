import { afterEach, describe, expect, it } from 'vitest';
import { loadFixtures } from '../helpers/fixtures.js';
import { createRequest, decide, expectError, requestCount } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectWs, type WsClient } from '../helpers/ws-client.js';

/**
 * Option and question ids are 1-64 characters of [A-Za-z0-9_.:-] whatever the wire format: a
 * handup body holding others is refused, a native frame's others are given safe ids in the record.
 * HTTP bodies and bridge frames go through one JSON parser.
 */

const fixture = (format: string, name: string) => structuredClone(loadFixtures(format).find(([file]) => file === name)![1]);

describe('ids from native frames and one JSON parser', () => {
  let t: TestServer;
  const sockets: WsClient[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.socket.terminate();
    await t?.close();
  });

  it('a native frame whose ids fall outside the safe set gets safe ids in the record; a handup body with them is still 400 naming the field', async () => {
    t = await startTestServer();
    const alp = fixture('alp', 'question-typed-answer.json').frame;
    alp.params.event.question.id = 'q_1 <b>x</b>';
    const question = await t.api.post('/v1/formats/alp/requests', alp);
    expect(question.status, question.text).toBe(201);
    expect(question.body.request.input.questions.map((q: { id: string }) => q.id)).toEqual(['q1']);

    const paperclip = fixture('paperclip', 'v1-permission-allow.json').frame;
    paperclip.choices[0].key = 'allow"onclick="x';
    const permission = await t.api.post('/v1/formats/paperclip/requests', paperclip);
    expect(permission.status, permission.text).toBe(201);
    expect(permission.body.request.options.map((o: { id: string }) => o.id)).toEqual(['o1', 'deny']);

    // The same frame on the bridge socket is a replay of the same record.
    const bridge = await connectWs(`${t.wsUrl}/v1/formats/alp/ws`, t.adminToken);
    sockets.push(bridge);
    bridge.send(alp);
    expect(await bridge.next()).toEqual({ type: 'countersign.accepted', id: question.body.request.id });

    const asked = { id: 'q_1 <b>x</b>', question: 'Which bucket?', allow_free_text: true };
    expectError(
      await t.api.post('/v1/requests', { title: 'x', kind: 'question', input: { questions: [asked] } }),
      400,
      'invalid_request',
      'input.questions[0].id',
    );
    const offered = [{ id: 'allow"onclick="x', label: 'Allow', outcome: 'approve' }];
    expectError(await t.api.post('/v1/requests', { title: 'x', options: offered }), 400, 'invalid_request', 'options[0].id');
    expect(await requestCount(t.api)).toBe(2);
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

  it('a native question called "__proto__" is answered as q1, and the reply carries "__proto__" as its own key', async () => {
    t = await startTestServer();
    const frame = fixture('paperclip', 'v2-input-optional-unanswered.json').frame;
    frame.payload.request.input.questions = [{ id: '__proto__', prompt: 'Which channel?', required: true, answerMode: 'text' }];
    const created = await t.api.post('/v1/formats/paperclip/requests', frame);
    expect(created.status, created.text).toBe(201);
    const record = created.body.request;
    expect(record.input.questions.map((q: { id: string }) => q.id)).toEqual(['q1']);
    const decided = await decide(t.api, record, 'submit', { fields: { answers: { q1: { selected: [], text: 'stable' } } } });
    expect(decided.status, decided.text).toBe(200);
    const reply = await t.api.get(`/v1/formats/paperclip/requests/${record.id}/reply`);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.text).toContain('"answers":{"__proto__":{"text":"stable"}}');
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

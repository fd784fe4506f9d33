import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeClock } from '../helpers/fake-clock.js';
import { loadFixtures } from '../helpers/fixtures.js';
import { decide, expectError, show } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { compileSchema, expectValidRequest } from '../helpers/upstream-schemas.js';
import { connectWs, type WsClient } from '../helpers/ws-client.js';

/**
 * The revised native-format rules (docs/formats/README.md) over a real port: each reply
 * as the agent's runtime takes it, over HTTP and, where the rule touches it, the bridge socket.
 */

const validateCommand = compileSchema('paperclip-prp-command.schema.json');

let t: TestServer;
const sockets: WsClient[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.socket.terminate();
  await t?.close();
});

async function ws(path: string, token: string = t.adminToken): Promise<WsClient> {
  const c = await connectWs(`${t.wsUrl}${path}`, token);
  sockets.push(c);
  return c;
}

async function post(format: string, frame: unknown, query = ''): Promise<any> {
  const res = await t.api.post(`/v1/formats/${format}/requests${query}`, frame);
  expect(res.status, res.text).toBe(201);
  expectValidRequest(res.body.request);
  return res.body.request;
}

async function replyOf(format: string, id: string, query = ''): Promise<any> {
  const res = await t.api.get(`/v1/formats/${format}/requests/${id}/reply${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body.reply;
}

async function audit(id: string): Promise<Array<{ event: string; actor: string; details?: any }>> {
  const res = await t.api.get(`/v1/requests/${id}/audit`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

function expectCommand(reply: unknown) {
  expect(validateCommand(reply) ? [] : validateCommand.errors, JSON.stringify(reply)).toEqual([]);
}

// ---- PaperClip frames ----

const prpEvent = (request: Record<string, unknown>, runId = 'run-1') => ({
  schema: 'paperclip.prp.event.v1',
  schemaVersion: 1,
  sourceEventId: `evt-${String(request.requestId)}`,
  sourceSeq: 1,
  sourceKind: 'runner',
  sourceInstanceId: 'runner-1',
  runId,
  normalizedSessionId: 'session-1',
  turnId: 'turn-1',
  eventType: 'runtime_request.created',
  priority: 0,
  emittedAt: '2026-09-28T12:00:00Z',
  payload: { request },
});

const permission = (requestId: string, details: Record<string, unknown> = { toolCallId: 'tool-1' }) =>
  prpEvent({
    schema: 'paperclip.runtime_request.v2',
    requestKind: 'permission_approval',
    requestId,
    type: 'permission',
    status: 'pending',
    prompt: 'Allow editing src/example.ts?',
    choices: [
      { key: 'accept', label: 'Allow once' },
      { key: 'decline', label: 'Deny' },
    ],
    details,
    origin: { adapter: 'acpx-runtime-sidecar', provider: 'acpx', method: 'session/request_permission' },
    turnId: 'turn-1',
    itemId: 'item-1',
  });

const questionSet = (requestId: string, questions: unknown[]) =>
  prpEvent({
    schema: 'paperclip.runtime_request.v2',
    requestKind: 'runtime',
    requestId,
    type: 'input',
    status: 'pending',
    prompt: 'The agent needs answers before it continues.',
    input: { schema: 'paperclip.question_set.v1', title: 'Deployment', questions },
    origin: { adapter: 'acpx-runtime-sidecar', provider: 'codex' },
    turnId: 'turn-1',
  });

describe('ALP: declining a plain question', () => {
  const question = (id: string) => ({
    jsonrpc: '2.0',
    method: 'event',
    params: {
      sessionId: 'ses_3f9a1c2b7d4e5f60',
      epoch: '8c1e4b7a2f9d4e06b3a5c8d1e7f20a94',
      seq: 81,
      ts: '2026-10-10T09:30:00.000Z',
      event: {
        type: 'question',
        question: {
          id,
          sessionId: 'ses_3f9a1c2b7d4e5f60',
          rootId: 'ses_3f9a1c2b7d4e5f60',
          agent: 'main',
          body: 'Postgres or SQLite?',
          options: ['Postgres', 'SQLite'],
          askedAt: '2026-10-10T09:30:00.000Z',
        },
      },
    },
  });

  it('dismisses it with the feedback as the reason, over HTTP and on the bridge socket; never sends the feedback as the answer', async () => {
    t = await startTestServer();
    const bridge = await ws('/v1/formats/alp/ws');
    bridge.send(question('q_c41d7e0a9b62'));
    const { id } = await bridge.next();
    const record = await show(t.api, id);
    const decided = await decide(t.api, record, 'decline', { feedback: 'SQLite' });
    expect(decided.status, decided.text).toBe(200);
    expect(decided.body.status).toBe('denied');
    const expected = { jsonrpc: '2.0', id: 1, method: 'question.answer', params: { questionId: 'q_c41d7e0a9b62', dismiss: true, reason: 'SQLite' } };
    expect(await replyOf('alp', id)).toEqual(expected);
    expect(await bridge.next()).toEqual(expected);
  });
});

describe('ALP: answers given in ALP itself, read as ALP reads them', () => {
  const asked = (id: string, options: string[]) => ({
    type: 'question',
    question: {
      id,
      sessionId: 'ses_3f9a1c2b7d4e5f60',
      rootId: 'ses_3f9a1c2b7d4e5f60',
      agent: 'reviewer',
      body: 'reviewer wants to run git push. Its permission profile careful asks you each time.',
      options,
      askedAt: '2026-10-10T09:30:00.000Z',
    },
  });
  const answered = (id: string, answer: string) => ({ type: 'question.resolved', questionId: id, outcome: 'answered', answer });

  it('ALP allows only on its own labels and approving words, compared trimmed and in any case; any other answer is a refusal with its reason', async () => {
    t = await startTestServer();
    const cases: Array<{ options: string[]; answer: string; status: string; option: string; feedback?: string }> = [
      // ALP's two-option permission takes "Always allow" as a refusal (it offered no such choice).
      { options: ['Allow once', 'Deny'], answer: 'Always allow', status: 'denied', option: 'deny', feedback: 'Always allow' },
      { options: ['Allow once', 'Always allow', 'Deny'], answer: ' always allow ', status: 'approved', option: 'always_allow' },
      { options: ['Allow once', 'Deny'], answer: 'lgtm', status: 'denied', option: 'deny', feedback: 'lgtm' },
      { options: ['Allow once', 'Deny'], answer: 'OK.', status: 'denied', option: 'deny', feedback: 'OK.' },
      { options: ['Allow once', 'Deny'], answer: 'Trust this workspace', status: 'denied', option: 'deny', feedback: 'Trust this workspace' },
      { options: ['Allow once', 'Deny'], answer: ' OK ', status: 'approved', option: 'allow_once' },
      { options: ['Allow once', 'Deny'], answer: 'có', status: 'approved', option: 'allow_once' },
      { options: ['Allow once', 'Deny'], answer: 'deny', status: 'denied', option: 'deny' },
      { options: ['Approve', 'Reject'], answer: 'Allow once', status: 'denied', option: 'reject', feedback: 'Allow once' },
      { options: ['Approve', 'Reject'], answer: 'yes', status: 'approved', option: 'approve' },
      { options: ['Duyệt', 'Từ chối'], answer: 'duyệt', status: 'approved', option: 'approve' },
    ];
    for (const [i, c] of cases.entries()) {
      const id = `q_answered_${i}`;
      const record = await post('alp', asked(id, c.options));
      const res = await t.api.post('/v1/formats/alp/events', answered(id, c.answer));
      expect(res.status, `${c.answer}: ${res.text}`).toBe(200);
      expect(res.body.request.status, c.answer).toBe(c.status);
      expect(res.body.request.decision, c.answer).toMatchObject({ option: c.option, decided_by: 'upstream' });
      const rows = await audit(record.id);
      expect(rows.at(-1)?.details?.feedback, c.answer).toBe(c.feedback);
    }
  });
});

/** A v2 permission for `command` whose choices come in the runner's order, as given. */
const permissionInOrder = (requestId: string, command: string, choices: Array<{ key: string; label: string }>) =>
  prpEvent({
    schema: 'paperclip.runtime_request.v2',
    requestKind: 'permission_approval',
    requestId,
    type: 'permission',
    status: 'pending',
    prompt: `Run ${command}?`,
    choices,
    details: { command },
    origin: { adapter: 'acpx-runtime-sidecar', provider: 'acpx', method: 'session/request_permission' },
    turnId: 'turn-1',
  });

describe('PaperClip: approvals nobody chose by hand allow once', () => {
  const sessionFirst = (requestId: string) =>
    permissionInOrder(requestId, 'git status', [
      { key: 'accept_for_session', label: 'Allow for this session' },
      { key: 'accept', label: 'Allow once' },
      { key: 'decline', label: 'Deny' },
    ]);

  it('a rule or an on_timeout approve answers accept even when the runner lists accept_for_session first; a reviewer may still pick it', async () => {
    const clock = createFakeClock();
    t = await startTestServer({}, { clock });
    const rule = await t.api.post('/v1/rules', { id: 'git-status', match: { format: 'paperclip', command: '^git status$' }, action: 'approve' });
    expect(rule.status, rule.text).toBe(201);
    const ruled = await t.api.post('/v1/formats/paperclip/requests', sessionFirst('permission-rule'));
    expect(ruled.status, ruled.text).toBe(201);
    expect(ruled.body.request.status).toBe('approved');
    expect(ruled.body.request.decision.option).toBe('accept');
    expectCommand(ruled.body.reply);
    expect(ruled.body.reply.payload.resolution).toEqual({ action: 'accept' });
    expect((await t.api.delete('/v1/rules/git-status')).status).toBe(200);

    const timed = await post('paperclip', sessionFirst('permission-timeout'), '?timeout=1m&on_timeout=approve');
    clock.advance(60_000);
    await expect.poll(async () => (await show(t.api, timed.id)).status).toBe('expired');
    expect((await show(t.api, timed.id)).decision.option).toBe('accept');
    expect((await replyOf('paperclip', timed.id)).payload.resolution).toEqual({ action: 'accept' });

    const chosen = await post('paperclip', sessionFirst('permission-reviewer'));
    expect(chosen.options.map((o: { id: string }) => o.id)).toEqual(['accept', 'accept_for_session', 'decline']);
    expect((await decide(t.api, chosen, 'accept_for_session')).status).toBe(200);
    expect((await replyOf('paperclip', chosen.id)).payload.resolution).toEqual({ action: 'accept_for_session' });
  });
});

describe('PaperClip: scope "session" on a permission that offers accept_for_session', () => {
  it('is sent as accept_for_session even where the request names no action a rule could remember; no rule is stored then', async () => {
    t = await startTestServer();
    const [[, fx]] = loadFixtures('paperclip').filter(([file]) => file === 'v2-permission-accept-for-session-scope.json');
    const record = await post('paperclip', fx!.frame);
    const res = await decide(t.api, record, 'accept', { scope: 'session' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'approved', decision: { option: 'accept', scope: 'session' } });
    expect(res.body.decision.rule_id ?? null).toBeNull();
    expectCommand(await replyOf('paperclip', record.id));
    expect((await replyOf('paperclip', record.id)).payload.resolution).toEqual({ action: 'accept_for_session' });
    expect((await audit(record.id)).at(-1)).toMatchObject({ event: 'decided', details: { scope: 'session', native_grant: true } });
    expect((await t.api.get('/v1/rules')).body).toEqual([]);
    // Nothing remembered here: the next request of that title waits for a person.
    const again = structuredClone(fx!.frame);
    again.payload.request.requestId = 'permission-3';
    expect((await post('paperclip', again)).status).toBe('pending');
    // Without accept_for_session on offer, such a request still cannot be remembered.
    const once = structuredClone(fx!.frame);
    once.payload.request.requestId = 'permission-4';
    once.payload.request.choices = once.payload.request.choices.filter((c: { key: string }) => c.key !== 'accept_for_session');
    expectError(await decide(t.api, await post('paperclip', once), 'accept', { scope: 'session' }), 400, 'invalid_decision', 'scope');
  });
});

describe("PaperClip: a grant for the whole session is a person's choice", () => {
  const sessionOnly = (requestId: string) =>
    permissionInOrder(requestId, 'git status', [
      { key: 'accept_for_session', label: 'Allow for this session' },
      { key: 'decline', label: 'Deny' },
    ]);

  it('a rule, auto mode or on_timeout approve never answers accept_for_session when the runner offers nothing narrower', async () => {
    const clock = createFakeClock();
    t = await startTestServer({}, { clock });
    expect((await t.api.post('/v1/rules', { id: 'git-status', match: { format: 'paperclip', command: '^git status$' }, action: 'approve' })).status).toBe(201);
    const tested = await t.api.post('/v1/rules/test', { format: 'paperclip', frame: sessionOnly('permission-test') });
    expect(tested.status, tested.text).toBe(200);
    expect(tested.body).toMatchObject({ action: 'approve', would_decide: null, skipped: expect.any(String) });
    const ruled = await post('paperclip', sessionOnly('permission-rule'));
    expect(ruled.status).toBe('pending');
    expect((await audit(ruled.id)).map((e) => e.event)).toEqual(['created', 'rule.skipped']);
    expect((await t.api.delete('/v1/rules/git-status')).status).toBe(200);

    expect((await t.api.request('PUT', '/v1/auto', { mode: 'all' })).status).toBe(200);
    expect((await post('paperclip', sessionOnly('permission-auto'))).status).toBe('pending');
    // Nor where the runner offers accept too: auto mode never approves a request with two approve options.
    const both = await post(
      'paperclip',
      permissionInOrder('permission-auto-both', 'git status', [
        { key: 'accept_for_session', label: 'Allow for this session' },
        { key: 'accept', label: 'Allow once' },
        { key: 'decline', label: 'Deny' },
      ]),
    );
    expect(both).toMatchObject({ status: 'pending', decision: null });
    const v1 = await post(
      'paperclip',
      prpEvent({
        schema: 'paperclip.runtime_request.v1',
        requestKind: 'runtime',
        requestId: 'v1-auto-both',
        type: 'permission',
        status: 'pending',
        mode: 'low',
        prompt: 'Run git status?',
        choices: [
          { key: 'allow', label: 'Allow' },
          { key: 'always', label: 'Always' },
          { key: 'deny', label: 'Deny' },
        ],
        details: { command: 'git status' },
      }),
    );
    expect(v1).toMatchObject({ status: 'pending', decision: null });
    // Offered accept alone, auto mode allows it.
    const once = await post(
      'paperclip',
      permissionInOrder('permission-auto-once', 'git status', [
        { key: 'accept', label: 'Allow once' },
        { key: 'decline', label: 'Deny' },
      ]),
    );
    expect(once).toMatchObject({ status: 'approved', decision: { option: 'accept', decided_by: 'auto' } });
    expect((await t.api.request('PUT', '/v1/auto', { mode: 'off' })).status).toBe(200);

    const timed = await post('paperclip', sessionOnly('permission-timeout'), '?timeout=1m&on_timeout=approve');
    expect(timed.on_timeout).toBe('expire');
    expect((await audit(timed.id))[0].details).toMatchObject({ on_timeout_sent: 'approve' });
    clock.advance(60_000);
    await expect.poll(async () => (await show(t.api, timed.id)).status).toBe('expired');
    expect((await show(t.api, timed.id)).decision).toBeNull();

    // A reviewer may still grant it.
    const chosen = await post('paperclip', sessionOnly('permission-reviewer'));
    expect((await decide(t.api, chosen, 'accept_for_session')).status).toBe(200);
    expect((await replyOf('paperclip', chosen.id)).payload.resolution).toEqual({ action: 'accept_for_session' });
  });
});

describe('PaperClip: denials nobody chose by hand refuse the call, not the turn', () => {
  it('a deny rule answers decline even when the runner lists cancel first; a reviewer may still pick cancel', async () => {
    t = await startTestServer();
    const cancelFirst = (requestId: string) =>
      permissionInOrder(requestId, 'git push --force', [
        { key: 'accept', label: 'Allow once' },
        { key: 'cancel', label: 'Deny and stop' },
        { key: 'decline', label: 'Deny' },
      ]);
    const rule = await t.api.post('/v1/rules', { id: 'no-force', match: { format: 'paperclip', command: '--force' }, action: 'deny' });
    expect(rule.status, rule.text).toBe(201);
    const ruled = await t.api.post('/v1/formats/paperclip/requests', cancelFirst('permission-deny-rule'));
    expect(ruled.status, ruled.text).toBe(201);
    expect(ruled.body.request.status).toBe('denied');
    expect(ruled.body.request.decision.option).toBe('decline');
    expect(ruled.body.reply.payload.resolution).toEqual({ action: 'decline' });
    expect(ruled.body.request.options.map((o: { id: string }) => o.id)).toEqual(['accept', 'decline', 'cancel']);
    expect((await t.api.delete('/v1/rules/no-force')).status).toBe(200);

    const chosen = await post('paperclip', cancelFirst('permission-deny-reviewer'));
    expect((await decide(t.api, chosen, 'cancel')).status).toBe(200);
    expect((await replyOf('paperclip', chosen.id)).payload.resolution).toEqual({ action: 'cancel' });
  });
});

describe('PaperClip v1: approvals nobody chose by hand allow once', () => {
  it('a rule answers the key that allows once even when the runner lists "always" first', async () => {
    t = await startTestServer();
    const rule = await t.api.post('/v1/rules', { id: 'git-status', match: { format: 'paperclip', command: '^git status$' }, action: 'approve' });
    expect(rule.status, rule.text).toBe(201);
    const ruled = await t.api.post(
      '/v1/formats/paperclip/requests',
      prpEvent({
        schema: 'paperclip.runtime_request.v1',
        requestKind: 'runtime',
        requestId: 'v1-always-first',
        type: 'permission',
        status: 'pending',
        prompt: 'Run git status?',
        choices: [
          { key: 'always_allow', label: 'Always allow' },
          { key: 'allow', label: 'Allow' },
          { key: 'deny', label: 'Deny' },
        ],
        details: { command: 'git status' },
      }),
    );
    expect(ruled.status, ruled.text).toBe(201);
    expect(ruled.body.request.status).toBe('approved');
    expect(ruled.body.request.decision.option).toBe('allow');
    expect(ruled.body.reply).toMatchObject({ requestId: 'v1-always-first', response: { decision: 'allow' } });

    // Where every approving key grants more than this call, the rule leaves it to a person.
    for (const key of ['alwaysAllow', 'allow_for_sessions', 'allow_for_project', 'allowEverywhere', 'allow_globally', 'yes_and_remember']) {
      const wide = await t.api.post(
        '/v1/formats/paperclip/requests',
        prpEvent({
          schema: 'paperclip.runtime_request.v1',
          requestKind: 'runtime',
          requestId: `v1-${key}`,
          type: 'permission',
          status: 'pending',
          prompt: 'Run git status?',
          choices: [
            { key, label: 'Allow' },
            { key: 'deny', label: 'Deny' },
          ],
          details: { command: 'git status' },
        }),
      );
      expect(wide.status, wide.text).toBe(201);
      expect(wide.body.request.status, key).toBe('pending');
    }
  });
});

describe('PaperClip controllerSeq', () => {
  it('GET …/reply?controller_seq=n renders the command with n and a fresh commandId; without it the stored command says 1', async () => {
    t = await startTestServer();
    const record = await post('paperclip', permission('permission-1'));
    expect(await replyOf('paperclip', record.id, '?controller_seq=7')).toBeNull();
    expect((await decide(t.api, record, 'accept')).status).toBe(200);

    const stored = await replyOf('paperclip', record.id);
    expectCommand(stored);
    expect(stored.controllerSeq).toBe(1);
    const seven = await replyOf('paperclip', record.id, '?controller_seq=7');
    expectCommand(seven);
    expect(seven).toEqual({ ...stored, controllerSeq: 7, commandId: expect.any(String) });
    expect(seven.commandId).not.toBe(stored.commandId);
    const again = await replyOf('paperclip', record.id, '?controller_seq=7&wait=1s');
    expect(again.commandId).not.toBe(seven.commandId);
    // Rendering with a number never changes what is stored.
    expect(await replyOf('paperclip', record.id)).toEqual(stored);
  });

  it('refuses a controller_seq that is not a positive integer, and one on a format without controller sequences', async () => {
    t = await startTestServer();
    const record = await post('paperclip', permission('permission-1'));
    for (const bad of ['0', '-1', '1.5', 'abc', '', '9007199254740993']) {
      expectError(await t.api.get(`/v1/formats/paperclip/requests/${record.id}/reply?controller_seq=${bad}`), 400, 'invalid_query', 'controller_seq');
    }
    const ask = await post('ask', { type: 'approval.required', seq: 1, payload: { id: 'act_1', toolName: 'bash' } }, '?session=s-1');
    expectError(await t.api.get(`/v1/formats/ask/requests/${ask.id}/reply?controller_seq=3`), 400, 'invalid_query', 'controller_seq');
  });

  it('on the bridge socket, commands pushed after countersign.controller_seq carry n, n+1, … in push order', async () => {
    t = await startTestServer();
    const bridge = await ws('/v1/formats/paperclip/ws');
    bridge.send({ type: 'countersign.controller_seq', next: 0 });
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'invalid_frame', error: expect.stringContaining('next') });
    bridge.send({ type: 'countersign.controller_seq', next: '4' });
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'invalid_frame' });

    bridge.send({ type: 'countersign.controller_seq', next: 41 });
    bridge.send(permission('permission-1'));
    const first = await bridge.next();
    expect(first).toEqual({ type: 'countersign.accepted', id: expect.any(String) });
    bridge.send(permission('permission-2'));
    const second = await bridge.next();

    expect((await decide(t.api, await show(t.api, second.id), 'decline')).status).toBe(200);
    const a = await bridge.next();
    expect((await decide(t.api, await show(t.api, first.id), 'accept')).status).toBe(200);
    const b = await bridge.next();
    expectCommand(a);
    expectCommand(b);
    expect([a.payload.requestId, a.controllerSeq]).toEqual(['permission-2', 41]);
    expect([b.payload.requestId, b.controllerSeq]).toEqual(['permission-1', 42]);
    expect(a.commandId).not.toBe(b.commandId);

    // A replayed frame whose request already ended gets its command at once, with the next number.
    bridge.send(permission('permission-1'));
    expect(await bridge.next()).toEqual({ type: 'countersign.accepted', id: first.id });
    expect(await bridge.next()).toMatchObject({ payload: { requestId: 'permission-1' }, controllerSeq: 43 });
    // The stored reply is untouched.
    expect((await replyOf('paperclip', first.id)).controllerSeq).toBe(1);

    // A bridge may restart the count; the socket stays open after an error.
    bridge.send({ type: 'countersign.controller_seq', next: 100 });
    bridge.send(permission('permission-2'));
    expect(await bridge.next()).toEqual({ type: 'countersign.accepted', id: second.id });
    expect(await bridge.next()).toMatchObject({ payload: { requestId: 'permission-2' }, controllerSeq: 100 });
  });

  it('the control message is refused on a format without controller sequences', async () => {
    t = await startTestServer();
    const bridge = await ws('/v1/formats/roll/ws');
    bridge.send({ type: 'countersign.controller_seq', next: 3 });
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'invalid_frame', error: expect.stringContaining('controller') });
  });
});

describe('PaperClip question sets: optional questions and textValidation', () => {
  const questions = [
    {
      id: 'replicas',
      prompt: 'How many replicas?',
      required: true,
      answerMode: 'text',
      textValidation: { inputType: 'integer', minimum: 1, maximum: 9 },
    },
    {
      id: 'checks',
      prompt: 'Which checks must pass?',
      required: false,
      answerMode: 'multi_select',
      options: [
        { id: 'unit', label: 'Unit' },
        { id: 'e2e', label: 'End-to-end' },
      ],
    },
    { id: 'notes', prompt: 'Anything else?', required: false, answerMode: 'text', textValidation: { maxLength: 5 } },
  ];

  it('marks optional questions on the record and lets a reviewer leave them unanswered; the reply omits them', async () => {
    t = await startTestServer();
    const record = await post('paperclip', questionSet('req-42', questions));
    expect(record.input.optional_questions).toEqual(['checks', 'notes']);
    expectError(await decide(t.api, record, 'submit', { fields: { answers: { checks: { selected: ['Unit'] } } } }), 400, 'invalid_decision', 'replicas');
    const decided = await decide(t.api, record, 'submit', { fields: { answers: { replicas: { selected: [], text: '3' } } } });
    expect(decided.status, decided.text).toBe(200);
    expect(decided.body.status).toBe('answered');
    const reply = await replyOf('paperclip', record.id);
    expectCommand(reply);
    expect(reply.payload.resolution).toEqual({
      action: 'submit',
      response: { schema: 'paperclip.question_response.v1', answers: { replicas: { text: '3' } } },
    });
  });

  it('refuses an answer textValidation forbids with 400 naming the question, and stores nothing', async () => {
    t = await startTestServer();
    const record = await post('paperclip', questionSet('req-43', questions));
    const answer = (replicas: string, extra: Record<string, unknown> = {}) => ({
      fields: { answers: { replicas: { selected: [], text: replicas }, ...extra } },
    });
    expectError(await decide(t.api, record, 'submit', answer('3.5')), 400, 'invalid_decision', 'fields.answers.replicas');
    expectError(await decide(t.api, record, 'submit', answer('12')), 400, 'invalid_decision', 'at most 9');
    expectError(await decide(t.api, record, 'submit', answer('three')), 400, 'invalid_decision', 'integer');
    expectError(
      await decide(t.api, record, 'submit', answer('2', { notes: { selected: [], text: 'too long' } })),
      400,
      'invalid_decision',
      'fields.answers.notes',
    );
    expect(await show(t.api, record.id)).toEqual(record);
    expect((await audit(record.id)).map((e) => e.event)).toEqual(['created']);
    expect((await decide(t.api, record, 'submit', answer('2', { notes: { selected: [], text: 'ok' } }))).status).toBe(200);
    expect((await replyOf('paperclip', record.id)).payload.resolution.response.answers).toEqual({ replicas: { text: '2' }, notes: { text: 'ok' } });
  });

  it('accepts a v1 elicitation with a question set like the v2 input form', async () => {
    t = await startTestServer();
    const frame = prpEvent({
      schema: 'paperclip.runtime_request.v1',
      requestKind: 'elicitation',
      requestId: 'elicitation-1',
      type: 'input',
      status: 'pending',
      prompt: 'Configure the retry policy',
      input: {
        schema: 'paperclip.question_set.v1',
        questions: [{ id: 'retries', prompt: 'Retries', required: true, answerMode: 'text', textValidation: { inputType: 'integer', minimum: 0, maximum: 5 } }],
      },
    });
    const record = await post('paperclip', frame);
    expect(record.kind).toBe('question');
    expectError(await decide(t.api, record, 'submit', { fields: { answers: { retries: { selected: [], text: '6' } } } }), 400, 'invalid_decision', 'retries');
    expect((await decide(t.api, record, 'submit', { fields: { answers: { retries: { selected: [], text: '3' } } } })).status).toBe(200);
    const reply = await replyOf('paperclip', record.id);
    expectCommand(reply);
    expect(reply.payload).toEqual({
      requestId: 'elicitation-1',
      turnId: 'turn-1',
      resolution: { action: 'submit', response: { schema: 'paperclip.question_response.v1', answers: { retries: { text: '3' } } } },
    });
  });
});

describe('PaperClip answers that could not be sent whole', () => {
  it('refuses a single-select answer with both an option and custom text (PaperClip refuses it; the text would be lost): 400 naming the question', async () => {
    t = await startTestServer();
    const record = await post(
      'paperclip',
      questionSet('req-44', [
        {
          id: 'target',
          prompt: 'Where?',
          required: true,
          answerMode: 'single_select',
          customAnswer: { enabled: true },
          options: [
            { id: 'staging', label: 'Staging' },
            { id: 'prod', label: 'Production' },
          ],
        },
      ]),
    );
    const submit = (target: Record<string, unknown>) => decide(t.api, record, 'submit', { fields: { answers: { target } } });
    expectError(await submit({ selected: ['Staging'], text: 'canary-eu' }), 400, 'invalid_decision', 'fields.answers.target');
    expect((await audit(record.id)).map((e) => e.event)).toEqual(['created']);
    expect((await submit({ selected: [], text: 'canary-eu' })).status).toBe(200);
    expect((await replyOf('paperclip', record.id)).payload.resolution.response.answers).toEqual({ target: { customText: 'canary-eu' } });
  });

  it('refuses issue-thread text beside another option of a single-select question, or past the 4000 characters of otherText', async () => {
    t = await startTestServer();
    const record = await post('paperclip', {
      schema: 'paperclip.interaction_request.v1',
      requestKind: 'issue_thread',
      requestId: 'questions-1',
      kind: 'ask_user_questions',
      blocking: true,
      payload: {
        version: 1,
        questions: [
          {
            id: 'colour',
            prompt: 'Which colour?',
            selectionMode: 'single',
            options: [
              { id: 'r', label: 'Red' },
              { id: 'o', label: 'Other', freeText: true },
            ],
          },
        ],
      },
    });
    const submit = (colour: Record<string, unknown>) => decide(t.api, record, 'submit', { fields: { answers: { colour } } });
    expectError(await submit({ selected: ['Red'], text: 'crimson, not red' }), 400, 'invalid_decision', 'fields.answers.colour');
    expectError(await submit({ selected: ['Other'], text: 'é'.repeat(4001) }), 400, 'invalid_decision', 'fields.answers.colour.text');
    expect((await audit(record.id)).map((e) => e.event)).toEqual(['created']);
    expect((await submit({ selected: ['Other'], text: 'é'.repeat(4000) })).status).toBe(200);
    expect((await replyOf('paperclip', record.id)).body).toEqual({ answers: [{ questionId: 'colour', optionIds: ['o'], otherText: 'é'.repeat(4000) }] });
  });
});

describe('PaperClip item verdicts', () => {
  it("refuses a submit that would send PaperClip's verdicts route nothing, or drop a reason, with 400 naming the item; stores nothing", async () => {
    t = await startTestServer();
    const record = await post('paperclip', {
      schema: 'paperclip.interaction_request.v1',
      requestKind: 'issue_thread',
      requestId: 'verdicts-1',
      kind: 'request_item_verdicts',
      blocking: true,
      payload: { version: 1, prompt: 'Review the upgrades', items: [{ id: 'api', label: 'The API change' }] },
    });
    const submit = (api: Record<string, unknown>) => decide(t.api, record, 'submit', { fields: { answers: { api } } });
    expectError(await submit({ selected: [], text: 'looks fine to me' }), 400, 'invalid_decision', 'fields.answers.api');
    expectError(await submit({ selected: ['Reject'] }), 400, 'invalid_decision', 'fields.answers.api.text');
    expect(await show(t.api, record.id)).toEqual(record);
    expect((await audit(record.id)).map((e) => e.event)).toEqual(['created']);
    expect((await submit({ selected: ['Approve'], text: 'looks fine to me' })).status).toBe(200);
    expect((await replyOf('paperclip', record.id)).body).toEqual({ verdicts: [{ id: 'api', verdict: 'approve', reason: 'looks fine to me' }] });
  });
});

describe('PaperClip driver details', () => {
  const SECRET = 'Bearer browser-must-not-see';
  const details = {
    toolCallId: 'tool-1',
    headers: { Authorization: SECRET, accept: 'application/json' },
    env: { GITHUB_TOKEN: 'ghp-must-not-see', 'x-api-key': 'key-must-not-see', accessKey: 'ak-must-not-see' },
    steps: [{ password: 'pw-must-not-see', user: 'deploy' }],
  };
  const secrets = [SECRET, 'ghp-must-not-see', 'key-must-not-see', 'ak-must-not-see', 'pw-must-not-see'];
  const leaks = (text: string) => secrets.filter((s) => text.includes(s));

  it('reach reviewers with credential-like keys redacted at any depth; the stored frame keeps them for the reply', async () => {
    t = await startTestServer();
    const events = await ws('/v1/events');
    await expect.poll(() => t.server.deps.hub.size()).toBeGreaterThan(0);
    const bridge = await ws('/v1/formats/paperclip/ws');
    bridge.send(permission('permission-7', details));
    const { id } = await bridge.next();
    const created = await events.nextMatching((m) => m.type === 'request.created');
    expect(leaks(JSON.stringify(created))).toEqual([]);

    const record = await show(t.api, id);
    const shown = JSON.parse(record.previews[0].inline);
    expect(shown).toEqual({
      toolCallId: 'tool-1',
      headers: { Authorization: '[redacted]', accept: 'application/json' },
      env: { GITHUB_TOKEN: '[redacted]', 'x-api-key': '[redacted]', accessKey: '[redacted]' },
      steps: [{ password: '[redacted]', user: 'deploy' }],
    });
    for (const path of [`/v1/requests/${id}`, '/v1/requests', `/v1/requests/${id}/audit`, `/v1/formats/paperclip/requests/${id}/reply`]) {
      const res = await t.api.get(path);
      expect(res.status, res.text).toBe(200);
      expect(leaks(res.text), path).toEqual([]);
    }
    expect(await t.server.deps.store.requests.nativeFrame(id)).toEqual(permission('permission-7', details));

    expect((await decide(t.api, record, 'accept')).status).toBe(200);
    const reply = await bridge.next();
    expectCommand(reply);
    const history = await t.api.get('/v1/history');
    expect(leaks(history.text)).toEqual([]);
  });
});

describe('Ask: a newer plan supersedes the older pending plan', () => {
  const plan = (session: string, id: string, seq: number, text: string) => ({
    method: 'session/event',
    params: { sessionId: session, event: { type: 'plan.proposed', seq, payload: { id, plan: text } } },
  });

  it('cancels the older plan in the same write (audit superseded, no reply, request.cancelled); the newer one stays pending', async () => {
    t = await startTestServer();
    const events = await ws('/v1/events');
    await expect.poll(() => t.server.deps.hub.size()).toBeGreaterThan(0);
    const bridge = await ws('/v1/formats/ask/ws');
    bridge.send(plan('s-1', 'plan_3', 3, '1. Migrate\n2. Deploy'));
    const older = await bridge.next();
    const other = await post('ask', plan('s-2', 'plan_3', 3, 'Another session'));
    const approval = await post('ask', {
      method: 'session/event',
      params: { sessionId: 's-1', event: { type: 'approval.required', seq: 4, payload: { id: 'act_1', toolName: 'bash' } } },
    });

    const newer = await post('ask', plan('s-1', 'plan_7', 7, '1. Deploy\n2. Migrate'));
    const cancelled = await events.nextMatching((m) => m.type === 'request.cancelled');
    expect(cancelled.request).toMatchObject({ id: older.id, status: 'cancelled', decision: null });
    expect((await show(t.api, older.id)).status).toBe('cancelled');
    expect((await show(t.api, newer.id)).status).toBe('pending');
    expect((await show(t.api, other.id)).status).toBe('pending');
    expect((await show(t.api, approval.id)).status).toBe('pending');
    const rows = await audit(older.id);
    expect(rows.map((e) => [e.event, e.actor])).toEqual([
      ['created', 'admin'],
      ['superseded', 'upstream'],
    ]);
    expect(rows[1]!.details).toEqual({ format: 'ask', superseded_by: newer.id, native_key: 'ask:s-1:plan_7' });
    expect(await replyOf('ask', older.id)).toBeNull();
    expectError(await decide(t.api, await show(t.api, older.id), 'approve'), 409, 'not_pending');

    // Nothing was pushed for the superseded plan: the next message answers the next frame.
    bridge.send(plan('s-1', 'plan_7', 7, '1. Deploy\n2. Migrate'));
    expect(await bridge.next()).toEqual({ type: 'countersign.accepted', id: newer.id });
    // Replaying the older plan's frame finds its record; it supersedes nothing.
    bridge.send(plan('s-1', 'plan_3', 3, '1. Migrate\n2. Deploy'));
    expect(await bridge.next()).toEqual({ type: 'countersign.accepted', id: older.id });
    expect((await show(t.api, newer.id)).status).toBe('pending');

    expect((await decide(t.api, await show(t.api, newer.id), 'approve')).status).toBe(200);
    expect(await replyOf('ask', newer.id)).toEqual({ id: 1, method: 'plan/approve', params: { sessionId: 's-1' } });
  });
  it("an approved plan's frame re-sent while a newer plan is pending gets its record but no reply: plan/approve would approve the newer one", async () => {
    t = await startTestServer();
    const first = await post('ask', plan('s-1', 'plan_1', 1, '1. Read the logs'));
    expect((await decide(t.api, first, 'approve')).status).toBe(200);
    const approved = { id: 1, method: 'plan/approve', params: { sessionId: 's-1' } };
    // Alone in its session, a replay gets the stored reply, as any replay does.
    const alone = await t.api.post('/v1/formats/ask/requests', plan('s-1', 'plan_1', 1, '1. Read the logs'));
    expect(alone.status, alone.text).toBe(200);
    expect(alone.body.reply).toEqual(approved);

    const newer = await post('ask', plan('s-1', 'plan_2', 2, '1. Drop the database'));
    for (const frame of [plan('s-1', 'plan_1', 1, '1. Read the logs'), plan('s-1', 'plan_1', 5, '1. Read the logs')]) {
      const again = await t.api.post('/v1/formats/ask/requests', frame);
      expect(again.status, again.text).toBe(200);
      expect(again.body.request).toMatchObject({ id: first.id, status: 'approved' });
      expect(again.body.reply).toBeNull();
    }
    // Nor on a bridge socket: accepted, and nothing pushed after it.
    const bridge = await ws('/v1/formats/ask/ws');
    bridge.send(plan('s-1', 'plan_1', 1, '1. Read the logs'));
    expect(await bridge.next()).toEqual({ type: 'countersign.accepted', id: first.id });
    bridge.send(plan('s-1', 'plan_2', 2, '1. Drop the database'));
    expect(await bridge.next()).toEqual({ type: 'countersign.accepted', id: newer.id });
    expect((await show(t.api, newer.id)).status).toBe('pending');
    // Asked for by id, it is stale too while the newer plan waits: plan/approve would approve that one.
    expect(await replyOf('ask', first.id)).toBeNull();
    const withSeq = await t.api.get(`/v1/formats/ask/requests/${first.id}/reply`);
    expect(withSeq.body.reply).toBeNull();
    // Once the newer plan has ended, the old approval is the host's newest again.
    const pendingPlan = await show(t.api, newer.id);
    expect((await decide(t.api, pendingPlan, pendingPlan.options.find((o: { outcome: string }) => o.outcome === 'deny').id)).status).toBe(200);
    expect(await replyOf('ask', first.id)).toEqual(approved);
  });

  it("an approved plan's reply is stale to whoever asks while the submitter's newer plan waits: the admin reading a token's request too", async () => {
    t = await startTestServer();
    const agent = await t.submitClient('bridge');
    const sent = async (id: string, seq: number) => {
      const res = await agent.api.post('/v1/formats/ask/requests', plan('s-1', id, seq, `1. ${id}`));
      expect(res.status, res.text).toBe(201);
      return res.body.request;
    };
    const first = await sent('plan_1', 1);
    expect((await decide(t.api, first, 'approve')).status).toBe(200);
    await sent('plan_2', 2);
    expect(await replyOf('ask', first.id)).toBeNull();
    expect((await agent.api.get(`/v1/formats/ask/requests/${first.id}/reply`)).body.reply).toBeNull();
  });

  it('a plan proposed before the pending one (lower seq) that arrives late is refused and supersedes nothing', async () => {
    t = await startTestServer();
    const newer = await post('ask', plan('s-1', 'plan_9', 9, '1. Deploy to production'));

    // A bridge replaying the session's event log delivers plan_5 after plan_9: the host has superseded it.
    const late = await t.api.post('/v1/formats/ask/requests', plan('s-1', 'plan_5', 5, '1. Run the tests'));
    expectError(late, 422, 'unsupported_frame', newer.id);
    const bridge = await ws('/v1/formats/ask/ws');
    bridge.send(plan('s-1', 'plan_5', 5, '1. Run the tests'));
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'unsupported_frame', error: expect.stringContaining('ask:s-1:plan_9') });
    expect((await show(t.api, newer.id)).status).toBe('pending');
    expect(await t.count('requests')).toBe(1);

    // plan_9 itself, re-sent as an event or listed as an interaction (no seq), is the same request.
    bridge.send(plan('s-1', 'plan_9', 9, '1. Deploy to production'));
    expect(await bridge.next()).toEqual({ type: 'countersign.accepted', id: newer.id });
    const listed = await t.api.post('/v1/formats/ask/requests?session=s-1', {
      id: 'plan_9',
      kind: 'plan',
      status: 'pending',
      payload: { plan: '1. Deploy to production' },
    });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.request.id).toBe(newer.id);

    // A later plan still supersedes it.
    const latest = await post('ask', plan('s-1', 'plan_12', 12, '1. Roll back'));
    expect((await show(t.api, newer.id)).status).toBe('cancelled');
    expect((await decide(t.api, latest, 'approve')).status).toBe(200);
    expect(await replyOf('ask', latest.id)).toEqual({ id: 1, method: 'plan/approve', params: { sessionId: 's-1' } });
  });

  it('a plan older by seq is refused even when the newer one commits while it is being checked', async () => {
    t = await startTestServer();
    const requests = t.server.deps.requests;
    const create = requests.create.bind(requests);
    let newer: any;
    let interleaved = false;
    // plan_9 commits after plan_5 has been read and checked, just before plan_5's own write
    // (another connection, or another daemon on the same database).
    requests.create = async (...args) => {
      if (!interleaved) {
        interleaved = true;
        newer = await post('ask', plan('s-1', 'plan_9', 9, '1. Deploy to production'));
      }
      return create(...args);
    };
    const late = await t.api.post('/v1/formats/ask/requests', plan('s-1', 'plan_5', 5, '1. Run the tests'));
    expect(interleaved).toBe(true);
    expectError(late, 422, 'unsupported_frame', newer.id);
    expect((await show(t.api, newer.id)).status).toBe('pending');
    expect(await t.count('requests')).toBe(1);
  });
});

describe('Ask: plan.approved and plan.rejected without an id', () => {
  const event = (session: string, type: string, seq: number, payload: Record<string, unknown>) => ({
    method: 'session/event',
    params: { sessionId: session, event: { type, seq, payload } },
  });

  it("resolve the session's one pending plan, as the host's plan/approve does; nothing else, and nothing twice", async () => {
    t = await startTestServer();
    const plan = await post('ask', event('s-1', 'plan.proposed', 3, { id: 'plan_3', plan: '1. Migrate' }));
    const other = await post('ask', event('s-2', 'plan.proposed', 3, { id: 'plan_3', plan: 'Another session' }));
    const approval = await post('ask', event('s-1', 'approval.required', 4, { id: 'act_1', toolName: 'bash' }));

    const approved = await t.api.post('/v1/formats/ask/events', event('s-1', 'plan.approved', 5, { plan: '1. Migrate' }));
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body.request).toMatchObject({ id: plan.id, status: 'approved', decision: { option: 'approve', decided_by: 'upstream' } });
    expect((await show(t.api, other.id)).status).toBe('pending');
    expect((await show(t.api, approval.id)).status).toBe('pending');
    // The plan has ended: the same frame again changes nothing.
    const again = await t.api.post('/v1/formats/ask/events', event('s-1', 'plan.approved', 6, { plan: '1. Migrate' }));
    expect([again.status, again.body]).toEqual([202, { ignored: true }]);

    const rejected = await t.api.post('/v1/formats/ask/events', event('s-2', 'plan.rejected', 7, { plan: 'Another session' }));
    expect(rejected.body.request).toMatchObject({ id: other.id, status: 'denied' });
  });
});

describe('Roll: Runtime 1.1 and Relay 1.1/1.2', () => {
  const WS = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
  const THREAD = '6fa459ea-ee8a-4ca4-894e-db77e160355e';
  const TURN = '16fd2706-8baf-433b-82eb-8c7fada847da';

  const runtimeEvent = (protocolVersion: string, approval: Record<string, unknown>) => ({
    type: 'runtime.event',
    workspaceId: WS,
    relaySequence: 12,
    event: {
      protocolVersion,
      runtimeInstanceId: '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b',
      sequence: 40,
      timestamp: '2026-08-04T00:00:00.000Z',
      threadId: THREAD,
      turnId: TURN,
      event: { type: 'approval.required', approval },
    },
  });

  const interaction = (method: string, projection: unknown, expiresAt: string, interactionId = randomUUID()) => ({
    type: 'interaction.request',
    workspaceId: WS,
    relaySequence: 3,
    interactionId,
    threadId: THREAD,
    turnId: TURN,
    expiresAt,
    sensitivity: 'normal',
    method,
    projection,
  });

  const inFiveMinutes = () => new Date(Date.now() + 5 * 60_000).toISOString();

  it('answers a Runtime 1.1 approval.required (full or projected) with approval.candidate', async () => {
    t = await startTestServer();
    const approvalId = randomUUID();
    const full = await post(
      'roll',
      runtimeEvent('1.1', { id: approvalId, turnId: TURN, agentName: 'workspace-agent', toolName: 'deploy', preview: { explanation: 'Deploy build 2291' } }),
    );
    expect((await decide(t.api, full, 'deny', { feedback: 'Not during the freeze' })).status).toBe(200);
    const reply = await replyOf('roll', full.id);
    expect(reply).toEqual({
      type: 'runtime.request',
      requestId: expect.any(String),
      workspaceId: WS,
      method: 'approval.candidate',
      params: { threadId: THREAD, turnId: TURN, approvalId, decision: 'reject', reason: 'Not during the freeze' },
    });

    const projectedId = randomUUID();
    const bridge = await ws('/v1/formats/roll/ws');
    bridge.send(runtimeEvent('1.1', { approvalId: projectedId, agentName: 'workspace-agent', toolName: 'deploy', explanation: 'Deploy build 2292' }));
    const { id } = await bridge.next();
    const projected = await show(t.api, id);
    expect(projected).toMatchObject({ title: 'Deploy build 2292', tool: 'deploy', dedupe_key: `roll:${WS}:${projectedId}` });
    expect((await decide(t.api, projected, 'approve')).status).toBe(200);
    expect(await bridge.next()).toEqual({
      type: 'runtime.request',
      requestId: expect.any(String),
      workspaceId: WS,
      method: 'approval.candidate',
      params: { threadId: THREAD, turnId: TURN, approvalId: projectedId, decision: 'approve' },
    });
  });

  it('answers an interaction.request approval with interaction.candidate, and takes its expiresAt as the deadline', async () => {
    const clock = createFakeClock(Date.parse('2026-08-04T00:00:00.000Z'));
    t = await startTestServer({}, { clock });
    const frame = interaction(
      'approval.request',
      { approvalId: randomUUID(), agentName: 'workspace-agent', toolName: 'deploy', explanation: 'Deploy build 2293' },
      '2026-08-04T00:05:00.000Z',
    );
    const bridge = await ws('/v1/formats/roll/ws');
    bridge.send(frame);
    const { id } = await bridge.next();
    const record = await show(t.api, id);
    expect(record).toMatchObject({ title: 'Deploy build 2293', dedupe_key: `roll:${WS}:${frame.interactionId}`, expires_at: Date.parse(frame.expiresAt) });
    expect((await decide(t.api, record, 'approve')).status).toBe(200);
    expect(await bridge.next()).toEqual({
      type: 'runtime.request',
      requestId: expect.any(String),
      workspaceId: WS,
      method: 'interaction.candidate',
      params: { interactionId: frame.interactionId, threadId: THREAD, turnId: TURN, method: 'approval.request', candidate: { decision: 'approve' } },
    });

    // An interaction whose expiresAt has passed asks nothing of anyone.
    const late = interaction('approval.request', { approvalId: randomUUID(), agentName: 'workspace-agent', toolName: 'deploy' }, '2026-08-03T23:59:59.000Z');
    expectError(await t.api.post('/v1/formats/roll/requests', late), 422, 'unsupported_frame', 'expiresAt');
    // On the socket the bridge hears of it (and of an encrypted approval), while event noise gets no answer.
    bridge.send({ type: 'runtime.ack', workspaceId: WS, throughRelaySequence: 3 });
    bridge.send(late);
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'unsupported_frame', error: expect.stringContaining('expiresAt') });
    bridge.send({ type: 'runtime.encrypted', workspaceId: WS, relaySequence: 5, envelopeId: randomUUID(), payloadKind: 'event', ciphertext: 'AAAA' });
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'unsupported_frame', error: expect.stringContaining('encrypted') });
  });

  it('refuses a userInput form the Runtime itself refuses: bounds no answer can meet (400 naming the field, nothing stored)', async () => {
    t = await startTestServer();
    const base = { label: 'Field', required: false };
    const options = [
      { id: 'a', label: 'A' },
      { id: 'b', label: 'B' },
    ];
    const cases: Array<[control: Record<string, unknown>, field: string]> = [
      [{ ...base, id: 'x', type: 'text', required: true, maxLength: 0 }, 'maxLength'],
      [{ ...base, id: 'x', type: 'multiline', minLength: 5, maxLength: 3 }, 'maxLength'],
      [{ ...base, id: 'x', type: 'number', min: 5, max: 1 }, 'min'],
      [{ ...base, id: 'x', type: 'number', integer: true, min: 1.2, max: 1.8 }, 'integer'],
      [{ ...base, id: 'x', type: 'choice', multiple: true, options, minSelections: 3 }, 'minSelections'],
      [{ ...base, id: 'x', type: 'choice', multiple: true, options, maxSelections: 3 }, 'maxSelections'],
      [{ ...base, id: 'x', type: 'choice', multiple: false, options, maxSelections: 2 }, 'maxSelections'],
      [{ ...base, id: 'x', type: 'choice', multiple: false, options, minSelections: 2 }, 'minSelections'],
    ];
    for (const [control, field] of cases) {
      const frame = interaction('userInput.request', { title: 'Deploy settings', controls: [control] }, inFiveMinutes());
      expectError(await t.api.post('/v1/formats/roll/requests', frame), 400, 'invalid_frame', `controls[0].${field}`);
    }
    expect(await t.count('requests')).toBe(0);
  });

  it('maps userInput.request controls to questions and answers with their values; limits are enforced at decision time', async () => {
    t = await startTestServer();
    const projection = {
      title: 'Deploy settings',
      controls: [
        {
          id: 'region',
          type: 'choice',
          label: 'Region',
          required: true,
          multiple: false,
          options: [
            { id: 'north', label: 'North' },
            { id: 'south', label: 'South' },
          ],
        },
        { id: 'workspace', type: 'text', label: 'Target workspace', required: true, maxLength: 10 },
        { id: 'replicas', type: 'number', label: 'Replicas', required: true, min: 1, max: 5, integer: true },
        { id: 'canary', type: 'boolean', label: 'Canary first?', required: true },
        { id: 'note', type: 'multiline', label: 'Note', required: false },
      ],
    };
    const frame = interaction('userInput.request', projection, inFiveMinutes());
    const record = await post('roll', frame);
    expect(record.kind).toBe('question');
    expect(record.input.questions.map((q: any) => q.id)).toEqual(['region', 'workspace', 'replicas', 'canary', 'note']);
    expect(record.input.questions[3].options).toEqual([{ label: 'Yes' }, { label: 'No' }]);
    expect(record.input.optional_questions).toEqual(['note']);

    const answers = (over: Record<string, unknown> = {}) => ({
      fields: {
        answers: {
          region: { selected: ['South'] },
          workspace: { selected: [], text: 'prod-eu' },
          replicas: { selected: [], text: '3' },
          canary: { selected: ['No'] },
          ...over,
        },
      },
    });
    expectError(
      await decide(t.api, record, 'submit', answers({ replicas: { selected: [], text: '2.5' } })),
      400,
      'invalid_decision',
      'fields.answers.replicas',
    );
    expectError(await decide(t.api, record, 'submit', answers({ replicas: { selected: [], text: '9' } })), 400, 'invalid_decision', 'fields.answers.replicas');
    expectError(
      await decide(t.api, record, 'submit', answers({ workspace: { selected: [], text: 'far-too-long-name' } })),
      400,
      'invalid_decision',
      'fields.answers.workspace',
    );
    expect((await show(t.api, record.id)).status).toBe('pending');

    expect((await decide(t.api, record, 'submit', answers())).status).toBe(200);
    expect(await replyOf('roll', record.id)).toEqual({
      type: 'runtime.request',
      requestId: expect.any(String),
      workspaceId: WS,
      method: 'interaction.candidate',
      params: {
        interactionId: frame.interactionId,
        threadId: THREAD,
        turnId: TURN,
        method: 'userInput.request',
        candidate: {
          status: 'submitted',
          values: [
            { id: 'region', value: 'south' },
            { id: 'workspace', value: 'prod-eu' },
            { id: 'replicas', value: 3 },
            { id: 'canary', value: false },
          ],
        },
      },
    });

    // Declining sends a cancelled candidate with the feedback as its reason.
    const declined = await post('roll', interaction('userInput.request', projection, inFiveMinutes()));
    expect((await decide(t.api, declined, 'decline', { feedback: 'Ask the release manager' })).status).toBe(200);
    expect((await replyOf('roll', declined.id)).params.candidate).toEqual({ status: 'cancelled', reason: 'Ask the release manager' });
  });

  it('refuses a number the runtime would receive as another one (more digits than a double carries), and sends one it carries exactly', async () => {
    t = await startTestServer();
    const projection = {
      title: 'Quota',
      controls: [
        { id: 'bytes', type: 'number', label: 'Bytes', required: true },
        { id: 'count', type: 'number', label: 'Count', required: true, integer: true, min: 1, max: 5 },
      ],
    };
    const record = await post('roll', interaction('userInput.request', projection, inFiveMinutes()));
    const answers = (bytes: string, count: string) => ({ fields: { answers: { bytes: { selected: [], text: bytes }, count: { selected: [], text: count } } } });
    for (const big of ['9007199254740993', '9007199254740993.0', '9007199254740993e0', '90071992547409930e-1', '20000000000000000.5'])
      expectError(await decide(t.api, record, 'submit', answers(big, '1')), 400, 'invalid_decision', 'fields.answers.bytes');
    // Below the minimum and no whole number, though its nearest double is 1.
    expectError(await decide(t.api, record, 'submit', answers('1', '0.99999999999999999')), 400, 'invalid_decision', 'fields.answers.count');
    expectError(await decide(t.api, record, 'submit', answers('1', '1.9999999999999999')), 400, 'invalid_decision', 'fields.answers.count');
    expect((await show(t.api, record.id)).status).toBe('pending');
    expect((await decide(t.api, record, 'submit', answers('1e20', '2.0'))).status).toBe(200);
    expect((await replyOf('roll', record.id)).params.candidate.values).toEqual([
      { id: 'bytes', value: 1e20 },
      { id: 'count', value: 2 },
    ]);
    const other = await post('roll', interaction('userInput.request', projection, inFiveMinutes()));
    expect((await decide(t.api, other, 'submit', answers('-0.1', '+5'))).status).toBe(200);
    expect((await replyOf('roll', other.id)).params.candidate.values).toEqual([
      { id: 'bytes', value: -0.1 },
      { id: 'count', value: 5 },
    ]);
  });

  it('interaction.cancelled ends a pending interaction: cancelled, or expired once expiresAt has passed', async () => {
    const clock = createFakeClock(Date.parse('2026-08-04T00:00:00.000Z'));
    t = await startTestServer({}, { clock });
    const projection = { approvalId: randomUUID(), agentName: 'workspace-agent', toolName: 'deploy' };
    const a = interaction('approval.request', projection, '2026-08-04T00:05:00.000Z');
    const b = interaction('approval.request', { ...projection, approvalId: randomUUID() }, '2026-08-04T00:01:00.000Z');
    const first = await post('roll', a, '?timeout=1h');
    const second = await post('roll', b, '?timeout=1h');
    const terminal = (frame: typeof a, type: string) => ({
      type,
      workspaceId: WS,
      relaySequence: 9,
      interactionId: frame.interactionId,
      threadId: THREAD,
      turnId: TURN,
      method: 'approval.request',
    });
    clock.advance(2 * 60_000);
    const cancelled = await t.api.post('/v1/formats/roll/events', terminal(a, 'interaction.cancelled'));
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body.request).toMatchObject({ id: first.id, status: 'cancelled' });
    const expired = await t.api.post('/v1/formats/roll/events', terminal(b, 'interaction.cancelled'));
    expect(expired.status, expired.text).toBe(200);
    expect(expired.body.request).toMatchObject({ id: second.id, status: 'expired' });
    expect(await replyOf('roll', first.id)).toBeNull();
    expect(await replyOf('roll', second.id)).toBeNull();
  });
});

describe('Bridge sockets: a malformed request frame is refused, event noise is not answered', () => {
  it('PaperClip event noise the request schema refuses (a null turnId, another kind of payload.request) still gets no answer', async () => {
    t = await startTestServer();
    const bridge = await ws('/v1/formats/paperclip/ws');
    bridge.send({ ...prpEvent({}), eventType: 'run.output', turnId: null, normalizedSessionId: '', payload: {} });
    bridge.send({ ...prpEvent({ kind: 'other' }), eventType: 'runtime_request.updated' });
    bridge.send({ type: 'countersign.controller_seq', next: 'x' });
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'invalid_frame', error: expect.stringContaining('next') });
  });

  it.each([
    ['paperclip', 'payload.request', { ...prpEvent({}), payload: {} }, { ...prpEvent({}), eventType: 'run.progress', payload: {} }],
    ['ask', 'toolName', { type: 'approval.required', seq: 1, payload: { id: 'act_1' } }, { type: 'turn.started', seq: 2, payload: { turnId: 't-1' } }],
    ['ask', 'plan', { type: 'plan.proposed', seq: 3, payload: { id: 'plan_2' } }, { type: 'turn.completed', seq: 4, payload: {} }],
  ])('%s: gets invalid_frame naming %s, as over HTTP, and nothing is stored', async (format, field, malformed, noise) => {
    t = await startTestServer();
    const query = format === 'ask' ? '?session=s-1' : '';
    expectError(await t.api.post(`/v1/formats/${format}/requests${query}`, malformed), 400, 'invalid_frame', field);
    const bridge = await ws(`/v1/formats/${format}/ws${query}`);
    bridge.send(noise);
    bridge.send(malformed);
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'invalid_frame', error: expect.stringContaining(field) });
    // The noise sent first got nothing: the next message answers the frame after the error.
    bridge.send(noise);
    bridge.send({ type: 'countersign.controller_seq', next: 'x' });
    expect(await bridge.next()).toMatchObject({ type: 'countersign.error', code: 'invalid_frame' });
    expect((await t.api.get('/v1/requests')).body).toEqual([]);
  });
});

describe('Upstream-sized texts', () => {
  it('takes what the upstream schemas allow: a 500-character PaperClip choice label, a 1000-character header, a 4000-character CJK prompt', async () => {
    t = await startTestServer();
    const frame = permission('req-long');
    frame.payload.request.choices = [
      { key: 'accept', label: `Allow ${'x'.repeat(494)}` },
      { key: 'decline', label: 'Deny' },
    ];
    expect((await post('paperclip', frame)).options[0].label).toHaveLength(500);
    const asked = await post(
      'paperclip',
      questionSet('req-long-q', [
        { id: 'where', header: 'h'.repeat(1000), prompt: '部'.repeat(4000), required: true, answerMode: 'text' },
        { id: 'which', prompt: 'Which?', required: true, answerMode: 'single_select', options: [{ id: 'a', label: 'A', description: 'д'.repeat(4000) }] },
      ]),
    );
    expect(asked.input.questions[0]).toMatchObject({ header: 'h'.repeat(1000), question: '部'.repeat(4000) });
    // Past those limits a create is refused, naming the field.
    const option = { id: 'go', label: 'g'.repeat(1025), outcome: 'approve' };
    expectError(await t.api.post('/v1/requests', { title: 'Go?', options: [option] }), 400, 'invalid_request', 'options[0].label');
  });

  it('gives a Roll approval whose agent and tool names are too long for the usual title a shorter one, instead of refusing it', async () => {
    t = await startTestServer();
    const frame = structuredClone(loadFixtures('roll').find(([file]) => file === 'e2e-request.json')![1]).frame;
    const approval = frame.event.event.approval;
    Object.assign(approval, { agentName: 'a'.repeat(250), toolName: 't'.repeat(250) });
    delete approval.reason;
    delete approval.preview.explanation;
    const record = await post('roll', frame);
    expect(record).toMatchObject({ title: 'Approve a tool call', tool: 't'.repeat(250), source: { agent: 'a'.repeat(250) } });
  });
});

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeClock } from '../helpers/fake-clock.js';
import { loadFixtures } from '../helpers/fixtures.js';
import { freshPostgresSchema, TEST_POSTGRES_URL, type FreshPostgres } from '../helpers/postgres.js';
import { decide, expectError, requestCount, show } from '../helpers/request-api.js';
import { startTestServer, type ApiClient, type ApiResponse, type TestServer } from '../helpers/test-server.js';
import { expectValidRequest } from '../helpers/upstream-schemas.js';
import { connectWs, type WsClient } from '../helpers/ws-client.js';

/**
 * The Claude Code hook endpoint over a real port (docs/formats/claude-code.md), driven by the recorded hook
 * payloads of test/fixtures/claude-code (one per tool family): Claude Code POSTs the hook JSON,
 * the call is held until a reviewer decides (or `wait` runs out), and the body is the hook output.
 */

const HOOK = '/v1/formats/claude-code/hook';
const FIXED_REQUEST_ID = '01KDXB5M00000000000000REQ0';
const fixtures = loadFixtures('claude-code');
const bashFrame = (toolUseId: string, command = 'make deploy', extra: Record<string, unknown> = {}) => ({
  session_id: 'sess-1',
  transcript_path: '/home/dev/.claude/projects/x/sess-1.jsonl',
  cwd: '/home/dev/src/web',
  permission_mode: 'default',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command, description: 'Deploy' },
  tool_use_id: toolUseId,
  ...extra,
});

describe('POST /v1/formats/claude-code/hook', () => {
  let t: TestServer;
  const sockets: WsClient[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.socket.terminate();
    await t?.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function reviewer(): Promise<WsClient> {
    const c = await connectWs(`${t.wsUrl}/v1/events`, t.adminToken);
    sockets.push(c);
    await expect.poll(() => t.server.deps.hub.size()).toBeGreaterThan(0);
    return c;
  }

  /** Posts a hook call that is expected to be held, and waits until its request is shown to reviewers. */
  async function held(api: ApiClient, events: WsClient, frame: unknown, query = '') {
    const answer = api.post(`${HOOK}${query}`, frame);
    const created = await events.nextMatching((m) => m.type === 'request.created');
    expect(created.format).toBe('claude-code');
    return { answer, record: created.request };
  }

  /** Waits until `n` hook calls are held on the waiters (the fake clock's timers are set then). */
  const holding = (n: number) => expect.poll(() => t.server.deps.waiters.count()).toBe(n);

  const decided = fixtures.filter(([, fx]) => fx.kind === 'request' && !fx.decide.expire);
  for (const [file, fx] of decided) {
    it(`${file}: held until the reviewer decides, answered with the hook output`, async () => {
      t = await startTestServer();
      const agent = await t.submitClient('laptop');
      const events = await reviewer();
      const { answer, record } = await held(agent.api, events, fx.frame, '?wait=5m');
      expectValidRequest(record);
      expect(record.dedupe_key).toBe(fx.expect.native_key);
      expect(record.source).toEqual({ ...fx.expect.request.source, integration: 'laptop' });
      expect(record.previews).toEqual(fx.expect.request.previews);
      expect(record.status).toBe('pending');

      const { option, ...extra } = fx.decide;
      const res = fx.decide.cancel ? await t.api.post(`/v1/requests/${record.id}/cancel`) : await decide(t.api, record, option, extra);
      expect(res.status, res.text).toBe(200);
      const out = await answer;
      expect(out.status, out.text).toBe(200);
      expect(out.body).toEqual(JSON.parse(JSON.stringify(fx.reply).replaceAll(FIXED_REQUEST_ID, record.id)));

      // Claude Code retrying the same call gets the same request and its decision at once.
      const again = await agent.api.post(HOOK, fx.frame);
      expect(again.body).toEqual(out.body);
      expect(await requestCount(t.api)).toBe(1);
    });
  }

  it('answers ask when the wait runs out (deny with on_wait=deny, {} for PermissionRequest); a late decision still lands', async () => {
    const clock = createFakeClock();
    t = await startTestServer({ callbacks: { allowlist: ['127.0.0.1'] } }, { clock });
    const agent = await t.submitClient('laptop');
    const events = await reviewer();

    const first = await held(agent.api, events, bashFrame('toolu_late'), `?callback_url=${encodeURIComponent('http://127.0.0.1:9/hook-done')}`);
    await holding(1);
    clock.advance(54_999);
    expect(t.server.deps.waiters.count()).toBe(1);
    clock.advance(1);
    const asked = await first.answer;
    expect(asked.status, asked.text).toBe(200);
    expect(asked.body).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'ask',
        permissionDecisionReason: `No decision in countersign yet on request ${first.record.id}; it stays open there`,
      },
    });

    const strict = await held(agent.api, events, bashFrame('toolu_strict'), '?wait=2s&on_wait=deny');
    await holding(1);
    clock.advance(2_000);
    expect((await strict.answer).body.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });

    const permission = { ...bashFrame('unused'), hook_event_name: 'PermissionRequest', tool_use_id: undefined };
    const dialog = await held(agent.api, events, permission, '?wait=1s');
    await holding(1);
    clock.advance(1_000);
    expect((await dialog.answer).body).toEqual({});

    // The hook gave up, the request did not: the reviewer's later decision is recorded, queued for
    // the callback with the hook output as its reply, and answers the next hook call at once.
    const late = await decide(t.api, first.record, 'allow', { feedback: 'go ahead' });
    expect(late.status, late.text).toBe(200);
    const history = await t.api.get('/v1/history?limit=5');
    expect(history.body.items.map((i: { request: { id: string } }) => i.request.id)).toContain(first.record.id);
    const [delivery] = await t.sql<{ body: string }>('SELECT body FROM callback_deliveries WHERE request_id = ?', [first.record.id]);
    const body = JSON.parse(delivery!.body);
    expect(body).toMatchObject({ type: 'request.decided', format: 'claude-code', data: { request: { id: first.record.id, status: 'approved' } } });
    expect(body.reply.hookSpecificOutput).toMatchObject({
      permissionDecision: 'allow',
      permissionDecisionReason: 'Approved by admin in countersign: go ahead',
    });
    // The same hook (same URL, so the same callback_url) retried: a replay of the same request.
    const retried = await agent.api.post(`${HOOK}?callback_url=${encodeURIComponent('http://127.0.0.1:9/hook-done')}`, bashFrame('toolu_late'));
    expect(retried.body).toEqual(body.reply);
  });

  it('holds at most 10 minutes whatever wait asks, and nothing in the server cuts a long hold short', async () => {
    const clock = createFakeClock();
    t = await startTestServer({}, { clock });
    const events = await reviewer();
    const long = await held(t.api, events, bashFrame('toolu_long'), '?wait=2h');
    await holding(1);
    clock.advance(10 * 60_000 - 1);
    expect(t.server.deps.waiters.count()).toBe(1);
    clock.advance(1);
    expect((await long.answer).body.hookSpecificOutput.permissionDecision).toBe('ask');
    // Nothing in the server cuts a long hold short.
    expect(t.server.app.server.requestTimeout).toBe(0);
    expect(t.server.app.server.timeout).toBe(0);
  });

  it('the same tool_use_id from another token is another request; a submit token sees only its own', async () => {
    t = await startTestServer();
    const a = await t.submitClient('laptop-a');
    const b = await t.submitClient('laptop-b');
    const events = await reviewer();
    const fromA = await held(a.api, events, bashFrame('toolu_same'));
    const fromB = await held(b.api, events, bashFrame('toolu_same'));
    expect(fromB.record.id).not.toBe(fromA.record.id);
    expect((await decide(t.api, fromA.record, 'deny', { feedback: 'not now' })).status).toBe(200);
    expect((await fromA.answer).body.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: 'not now' });
    expectError(await b.api.get(`/v1/requests/${fromA.record.id}`), 404, 'not_found');
    expect((await t.api.post(`/v1/requests/${fromB.record.id}/cancel`)).status).toBe(200);
    expect((await fromB.answer).body.hookSpecificOutput.permissionDecision).toBe('deny');
  });

  it('a PermissionRequest for a call PreToolUse already asked about finds the same request and answers in its own shape', async () => {
    t = await startTestServer();
    const agent = await t.submitClient('both-hooks');
    const pre = await agent.api.post(`${HOOK}?wait=1ms`, bashFrame('toolu_both'));
    expect(pre.body.hookSpecificOutput.permissionDecision).toBe('ask');
    const [record] = (await t.api.get('/v1/requests?status=pending')).body;
    const perm = await agent.api.post(`${HOOK}?wait=1ms`, { ...bashFrame('toolu_both'), hook_event_name: 'PermissionRequest' });
    expect(perm.status, perm.text).toBe(200);
    expect(perm.body).toEqual({});
    expect((await decide(t.api, record, 'deny', { feedback: 'not that' })).status).toBe(200);
    const again = await agent.api.post(`${HOOK}?wait=1ms`, { ...bashFrame('toolu_both'), hook_event_name: 'PermissionRequest' });
    expect(again.body.hookSpecificOutput).toMatchObject({ hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'not that' } });
    expect(await requestCount(t.api)).toBe(1);
    // (An edit of the tool input keeps to its fields and types: checked before anything is stored.)
    const edited = await agent.api.post(`${HOOK}?wait=1ms`, bashFrame('toolu_edit'));
    expect(edited.body.hookSpecificOutput.permissionDecision).toBe('ask');
    const pending = (await t.api.get('/v1/requests?status=pending')).body[0];
    expectError(await decide(t.api, pending, 'allow', { fields: { command: 42 } }), 400, 'invalid_decision', 'fields.command');
    expectError(await decide(t.api, pending, 'allow', { fields: { zzz: 'x' } }), 400, 'invalid_decision', 'fields.zzz');
    expect((await show(t.api, pending.id)).status).toBe('pending');
    // Other tool input under the same id is still another question.
    const other = await agent.api.post(`${HOOK}?wait=1ms`, { ...bashFrame('toolu_both', 'rm -rf /'), hook_event_name: 'PermissionRequest' });
    expectError(other, 409, 'native_conflict');
  });

  it('on the generic endpoint and the bridge socket too, a PermissionRequest replaying a PreToolUse gets its own shape of reply', async () => {
    t = await startTestServer();
    const agent = await t.submitClient('generic');
    const REQUESTS = '/v1/formats/claude-code/requests';
    const pre = await agent.api.post(REQUESTS, bashFrame('toolu_generic'));
    expect(pre.status, pre.text).toBe(201);
    expect((await decide(t.api, pre.body.request, 'allow')).status).toBe(200);
    const again = await agent.api.post(REQUESTS, bashFrame('toolu_generic'));
    expect(again.body.reply.hookSpecificOutput).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'allow' });
    const perm = await agent.api.post(REQUESTS, { ...bashFrame('toolu_generic'), hook_event_name: 'PermissionRequest' });
    expect(perm.status, perm.text).toBe(200);
    expect(perm.body.request.id).toBe(pre.body.request.id);
    expect(perm.body.reply.hookSpecificOutput).toMatchObject({ hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } });
    // The stored reply is the first frame's, as GET …/reply shows it.
    const stored = await agent.api.get(`${REQUESTS}/${pre.body.request.id}/reply`);
    expect(stored.body.reply.hookSpecificOutput.hookEventName).toBe('PreToolUse');

    // A bridge that sends the PermissionRequest while the request waits hears the reply in that shape once decided.
    const waiting = await agent.api.post(REQUESTS, bashFrame('toolu_bridge'));
    const ws = await connectWs(`${t.wsUrl}/v1/formats/claude-code/ws`, agent.token);
    ws.socket.send(JSON.stringify({ ...bashFrame('toolu_bridge'), hook_event_name: 'PermissionRequest' }));
    expect(await ws.next()).toEqual({ type: 'countersign.accepted', id: waiting.body.request.id });
    expect((await decide(t.api, waiting.body.request, 'deny', { feedback: 'no' })).status).toBe(200);
    expect((await ws.next()).hookSpecificOutput).toMatchObject({ hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'no' } });
    ws.socket.close();
  });

  it('takes the follow-up hooks on the same URL: PostToolUse ends what still waits, an unknown call changes nothing', async () => {
    t = await startTestServer();
    const agent = await t.submitClient('laptop');
    const created = await agent.api.post('/v1/formats/claude-code/requests', bashFrame('toolu_ran'));
    expect(created.status, created.text).toBe(201);
    const post = { ...bashFrame('toolu_ran'), hook_event_name: 'PostToolUse', tool_response: { stdout: 'ok' } };
    const res = await agent.api.post(HOOK, post);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({});
    const after = await show(t.api, created.body.request.id);
    expect(after).toMatchObject({ status: 'cancelled', decision: null });
    const audit = (await t.api.get(`/v1/requests/${after.id}/audit`)).body;
    expect(audit.at(-1)).toMatchObject({ event: 'cancelled', actor: 'upstream:laptop', details: { feedback: expect.stringContaining('went ahead') } });

    for (const frame of [
      { ...post, tool_use_id: 'toolu_never_seen' },
      { session_id: 'sess-1', hook_event_name: 'Stop', stop_hook_active: false },
      { session_id: 'sess-9', hook_event_name: 'SessionEnd', reason: 'other' },
    ]) {
      const r = await agent.api.post(HOOK, frame);
      expect(r.status, r.text).toBe(200);
      expect(r.body).toEqual({});
    }
    expect(await requestCount(t.api)).toBe(1);
  });

  it('a PermissionRequest with the input of a call that already ran asks anew, never getting the earlier decision', async () => {
    t = await startTestServer();
    const agent = await t.submitClient('perm-hooks');
    // PermissionRequest hooks carry no tool_use_id: their key is the hash of session, tool and input.
    const perm = (command: string) => ({
      ...bashFrame('unused', command),
      hook_event_name: 'PermissionRequest',
      tool_use_id: undefined,
      permission_suggestions: [],
    });
    const ran = (command: string, toolUseId: string) => ({ ...bashFrame(toolUseId, command), hook_event_name: 'PostToolUse', tool_response: { stdout: '' } });

    // Approved in countersign; a retry before the call ran still gets that decision.
    const first = agent.api.post(`${HOOK}?wait=5m`, perm('git push --force'));
    await holding(1);
    const [record] = (await t.api.get('/v1/requests?status=pending')).body;
    expect((await decide(t.api, record, 'allow')).status).toBe(200);
    expect((await first).body.hookSpecificOutput.decision).toEqual({ behavior: 'allow' });
    expect((await agent.api.post(`${HOOK}?wait=1ms`, perm('git push --force'))).body.hookSpecificOutput.decision).toEqual({ behavior: 'allow' });
    // The call ran; the same command later in the session is a new call, for a person again.
    expect((await agent.api.post(HOOK, ran('git push --force', 'toolu_push_1'))).body).toEqual({});
    expect((await agent.api.post(`${HOOK}?wait=1ms`, perm('git push --force'))).body).toEqual({});
    const pending = (await t.api.get('/v1/requests?status=pending')).body;
    expect(pending.map((r: { title: string }) => r.title)).toEqual(['git push --force']);
    expect(pending[0].id).not.toBe(record.id);

    // Nobody decided in time, Claude Code's own prompt allowed it, and it ran: its request is
    // cancelled, and the next identical call waits for a person instead of a standing deny.
    expect((await agent.api.post(`${HOOK}?wait=1ms`, perm('npm test'))).body).toEqual({});
    expect((await agent.api.post(HOOK, ran('npm test', 'toolu_test_1'))).body).toEqual({});
    expect((await agent.api.post(`${HOOK}?wait=1ms`, perm('npm test'))).body).toEqual({});
    const statuses = (await t.api.get('/v1/requests?limit=10')).body.map((r: { title: string; status: string }) => `${r.title}: ${r.status}`);
    expect(statuses).toEqual(['npm test: pending', 'npm test: cancelled', 'git push --force: pending', 'git push --force: approved']);
  });

  it('refuses calls without a token and malformed hooks or queries with a 4xx naming the field, storing nothing', async () => {
    t = await startTestServer();
    expectError(await t.api.post(HOOK, bashFrame('toolu_1'), { token: null }), 401, 'unauthorized');
    expectError(await t.api.post(HOOK, { ...bashFrame('toolu_1'), tool_input: undefined }), 400, 'invalid_frame', 'tool_input');
    expectError(await t.api.post(HOOK, { ...bashFrame('toolu_1'), session_id: 42 }), 400, 'invalid_frame', 'session_id');
    expectError(await t.api.post(HOOK, { ...bashFrame('toolu_1'), tool_use_id: 'x'.repeat(300) }), 400, 'invalid_frame', 'tool_use_id');
    // A Bash call with no command as text would show the reviewer an empty one.
    for (const command of [['ls'], undefined, '  ']) {
      expectError(await t.api.post(HOOK, { ...bashFrame('toolu_1'), tool_input: { command } }), 400, 'invalid_frame', 'tool_input.command');
    }
    expectError(await t.api.post(`${HOOK}?on_wait=allow`, bashFrame('toolu_1')), 400, 'invalid_query', 'on_wait');
    expectError(await t.api.post(`${HOOK}?wait=soon`, bashFrame('toolu_1')), 400, 'invalid_query', 'wait');
    // The message says what is wrong: no unit, or not positive.
    expectError(await t.api.post(`${HOOK}?wait=soon`, bashFrame('toolu_1')), 400, 'invalid_query', 'use a number with a unit');
    expectError(await t.api.post(`${HOOK}?wait=0s`, bashFrame('toolu_1')), 400, 'invalid_query', 'query.wait: duration "0s" must be positive');
    expectError(await t.api.post(`${HOOK}?colour=red`, bashFrame('toolu_1')), 400, 'invalid_query', 'colour');
    expectError(await t.api.post(`${HOOK}?callback_url=${encodeURIComponent('https://evil.example/x')}`, bashFrame('toolu_1')), 400, 'callback_not_allowed');
    const raw: ApiResponse = await t.api.request('POST', HOOK, undefined, { raw: '{"session_id":', headers: { 'content-type': 'application/json' } });
    expectError(raw, 400, 'invalid_frame', 'JSON');
    expect(await requestCount(t.api)).toBe(0);
  });

  it("counts hook calls against the token's create budget: over it is 429 and nothing is stored", async () => {
    t = await startTestServer({ requests: { max_per_minute: 1 } });
    const agent = await t.submitClient('busy');
    expect((await agent.api.post(`${HOOK}?wait=1ms`, bashFrame('toolu_r1'))).status).toBe(200);
    expectError(await agent.api.post(`${HOOK}?wait=1ms`, bashFrame('toolu_r2')), 429, 'rate_limited');
    // Follow-up hooks create nothing and are not counted.
    expect((await agent.api.post(HOOK, { ...bashFrame('toolu_r1'), hook_event_name: 'PostToolUse' })).status).toBe(200);
    expect(await requestCount(t.api)).toBe(1);
  });

  it('reads repo and branch from a git work tree at cwd; the query may name them instead', async () => {
    t = await startTestServer();
    const events = await reviewer();
    const root = mkdtempSync(join(tmpdir(), 'countersign-git-'));
    dirs.push(root);
    mkdirSync(join(root, '.git'));
    mkdirSync(join(root, 'packages', 'api'), { recursive: true });
    writeFileSync(join(root, '.git', 'HEAD'), 'ref: refs/heads/feature/login\n');
    writeFileSync(
      join(root, '.git', 'config'),
      '[core]\n\tbare = false\n[remote "origin"]\n\turl = https://bot:s3cret@github.com/acme/web.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n',
    );

    const inTree = await held(t.api, events, bashFrame('toolu_git', 'ls', { cwd: join(root, 'packages', 'api') }), '?wait=1ms');
    expect(inTree.record.source).toMatchObject({ cwd: join(root, 'packages', 'api'), repo: 'acme/web', branch: 'feature/login' });
    expect(JSON.stringify(inTree.record)).not.toContain('s3cret');
    await inTree.answer;

    const named = await held(t.api, events, bashFrame('toolu_named', 'ls', { cwd: root }), '?wait=1ms&repo=acme/other&branch=main');
    expect(named.record.source).toMatchObject({ repo: 'acme/other', branch: 'main' });
    await named.answer;

    const elsewhere = await held(t.api, events, bashFrame('toolu_none', 'ls', { cwd: join(tmpdir(), 'no-such-dir-for-countersign') }), '?wait=1ms');
    expect(elsewhere.record.source).toMatchObject({ repo: null, branch: null });
    await elsewhere.answer;

    // The same hook JSON on the generic endpoint and the bridge socket: the same source.
    const generic = await t.api.post('/v1/formats/claude-code/requests', bashFrame('toolu_generic_git', 'ls', { cwd: root }));
    expect(generic.status, generic.text).toBe(201);
    expect(generic.body.request.source).toMatchObject({ cwd: root, repo: 'acme/web', branch: 'feature/login' });
    const ws = await connectWs(`${t.wsUrl}/v1/formats/claude-code/ws`, t.adminToken);
    sockets.push(ws);
    ws.socket.send(JSON.stringify(bashFrame('toolu_bridge_git', 'ls', { cwd: root })));
    const accepted = await ws.next();
    expect(accepted.type).toBe('countersign.accepted');
    expect((await show(t.api, accepted.id)).source).toMatchObject({ repo: 'acme/web', branch: 'feature/login' });
  });
});

describe.runIf(TEST_POSTGRES_URL)('Claude Code hook calls across daemons on one PostgreSQL database', () => {
  let db: FreshPostgres | undefined;
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    await db?.drop();
    db = undefined;
  });

  it('a hook call held on one daemon is answered by a decision made on another', async () => {
    db = await freshPostgresSchema();
    const a = await startTestServer({ storage: { url: db.url } });
    servers.push(a);
    const b = await startTestServer({ storage: { url: db.url } });
    servers.push(b);
    const held = b.api.post(`${HOOK}?wait=2m`, bashFrame('toolu_cluster'));
    await expect.poll(async () => (await a.api.get('/v1/requests?format=claude-code')).body.length).toBe(1);
    const [record] = (await a.api.get('/v1/requests?format=claude-code')).body;
    expect((await decide(a.api, record, 'allow')).status).toBe(200);
    const out = await held;
    expect(out.status, out.text).toBe(200);
    expect(out.body.hookSpecificOutput).toMatchObject({ permissionDecision: 'allow', permissionDecisionReason: 'Approved by admin in countersign' });
  });
});

import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeClock } from '../helpers/fake-clock.js';
import { decide, expectError, requestCount, show } from '../helpers/request-api.js';
import { startTestServer, TEST_STORE, type TestServer } from '../helpers/test-server.js';
import { expectValidRequest } from '../helpers/upstream-schemas.js';
import { connectWs, type WsClient } from '../helpers/ws-client.js';

/**
 * The MCP server at /mcp driven by the official SDK's own Client over the
 * Streamable HTTP transport, as Claude Code, Cursor or any MCP client would.
 */

describe('MCP server at /mcp', () => {
  let t: TestServer;
  const clients: Client[] = [];
  const sockets: WsClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => undefined);
    for (const s of sockets.splice(0)) s.socket.terminate();
    await t?.close();
  });

  async function mcp(token: string | null, name = 'test-agent'): Promise<Client> {
    const client = new Client({ name, version: '1.2.3' });
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers } }));
    clients.push(client);
    return client;
  }

  async function reviewer(): Promise<WsClient> {
    const c = await connectWs(`${t.wsUrl}/v1/events`, t.adminToken);
    sockets.push(c);
    await expect.poll(() => t.server.deps.hub.size()).toBeGreaterThan(0);
    return c;
  }

  const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<any>;

  /** Overwrites a stored record with `text`, straight in the daemon's database. */
  async function corruptRecord(id: string, text: string) {
    if (TEST_STORE === 'postgres') return void (await t.sql('UPDATE requests SET record = ? WHERE id = ?', [text, id]));
    const db = new Database(join(t.dataDir, 'countersign.db'));
    try {
      db.prepare('UPDATE requests SET record = ? WHERE id = ?').run(text, id);
    } finally {
      db.close();
    }
  }

  it('introduces itself with instructions that say pending means wait, and lists six tools with schemas', async () => {
    t = await startTestServer();
    const client = await mcp(t.adminToken);
    expect(client.getServerVersion()).toMatchObject({ name: 'countersign', version: t.server.deps.version });
    expect(client.getInstructions()).toMatch(/pending.*Do NOT proceed/s);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'ask_question',
      'cancel_request',
      'get_request',
      'list_requests',
      'request_approval',
      'wait_for_decision',
    ]);
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
    }
    const approval = tools.find((tool) => tool.name === 'request_approval')!;
    expect(approval.inputSchema.required).toEqual(['title']);
    expect(Object.keys(approval.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['title', 'summary', 'kind', 'command', 'previews', 'options', 'risk', 'timeout', 'dedupe_key', 'source', 'wait_seconds']),
    );
  });

  it("a client name past source.agent's 256 bytes is cut at a character boundary, not refused", async () => {
    t = await startTestServer();
    const client = await mcp(t.adminToken, 'é'.repeat(200));
    for (const [tool, args] of [
      ['request_approval', { title: 'long name' }],
      ['ask_question', { title: 'q', questions: [{ id: 'a', question: 'Which?', allow_free_text: true }] }],
    ] as const) {
      const res = await call(client, tool, args);
      expect(res.isError, res.content[0].text).toBeFalsy();
      const agent = res.structuredContent.request.source.agent as string;
      expect(Buffer.byteLength(agent)).toBeLessThanOrEqual(256);
      expect(agent).toMatch(/^é+…$/);
    }
  });

  it('a client name with U+0000 (which no store keeps) is taken without it, not refused on every call', async () => {
    t = await startTestServer();
    const client = await mcp(t.adminToken, 'cursor\u0000x');
    const res = await call(client, 'request_approval', { title: 'NUL in the name' });
    expect(res.isError, res.content[0].text).toBeFalsy();
    expect(res.structuredContent.request.source.agent).toBe('cursorx');
  });

  it('request_approval stores an mcp request of the token, the client named as agent; a reviewer decides; wait_for_decision returns it', async () => {
    t = await startTestServer();
    const agent = await t.submitClient('cursor-laptop');
    const client = await mcp(agent.token, 'cursor');
    const created = await call(client, 'request_approval', {
      title: 'Drop the staging database',
      command: 'dropdb staging',
      risk: 'high',
      source: { cwd: '/srv/app' },
    });
    expect(created.isError).toBeFalsy();
    const record = created.structuredContent.request;
    expectValidRequest(record);
    expect(record).toMatchObject({
      status: 'pending',
      kind: 'command',
      risk: 'high',
      source: { integration: 'cursor-laptop', agent: 'cursor', cwd: '/srv/app' },
      previews: [{ type: 'command', command: { shell: 'dropdb staging', cwd: '/srv/app' } }],
    });
    expect(created.content[0].text).toContain('Do not proceed');
    const listed = await t.api.get('/v1/requests?format=mcp');
    expect(listed.body.map((r: { id: string }) => r.id)).toEqual([record.id]);
    expect((await t.api.get(`/v1/requests/${record.id}/audit`)).body.map((a: { event: string }) => a.event)).toEqual(['created']);

    const pending = await call(client, 'wait_for_decision', { ids: [record.id], max_wait_seconds: 0 });
    expect(pending.structuredContent.requests.map((r: { status: string }) => r.status)).toEqual(['pending']);
    expect((await decide(t.api, record, 'deny', { feedback: 'not on a Friday' })).status).toBe(200);
    const ended = await call(client, 'wait_for_decision', { ids: [record.id] });
    expect(ended.structuredContent.requests[0]).toMatchObject({ id: record.id, status: 'denied', decision: { feedback: 'not on a Friday' } });
    expect(ended.content[0].text).toContain('do not do it');
    // No native frame, so no native reply and no failed render in the audit trail.
    expect((await t.api.get(`/v1/requests/${record.id}/audit`)).body.map((a: { event: string }) => a.event)).toEqual(['created', 'decided']);
  });

  it('answers each request in one line of text, whatever line breaks its title or feedback holds', async () => {
    t = await startTestServer();
    const client = await mcp(t.adminToken);
    const created = await call(client, 'request_approval', { title: 'Deploy\nthe web app\u2028now' });
    expect(created.content[0].text).toMatch(/^request \S+ "Deploy the web app now" is pending: [^\n]*$/);
    const record = created.structuredContent.request;
    expect(record.title).toBe('Deploy\nthe web app\u2028now');
    expect((await decide(t.api, record, 'deny', { feedback: 'Not today.\r\n\r\nTry Monday.' })).status).toBe(200);
    const listed = await call(client, 'list_requests', {});
    expect(listed.content[0].text).toBe(`request ${record.id} "Deploy the web app now" is denied (feedback: Not today. Try Monday.): do not do it.`);
  });

  it('a tool that fails unexpectedly answers "internal error" as an isError result, never the cause', async () => {
    t = await startTestServer();
    const client = await mcp(t.adminToken);
    const id = (await call(client, 'request_approval', { title: 'Rotate the keys' })).structuredContent.request.id;
    // A damaged row: reading it fails with the JSON parser's own message, which quotes the row.
    await corruptRecord(id, '{"note": "s3cret-row-content"x');
    const res = await call(client, 'get_request', { id });
    expect(res).toEqual({ content: [{ type: 'text', text: 'internal error' }], isError: true });
    const listed = await call(client, 'list_requests', {});
    expect(listed).toEqual({ content: [{ type: 'text', text: 'internal error' }], isError: true });
  });

  it('waits in the call with wait_seconds until the reviewer decides; ask_question returns answers keyed by question id', async () => {
    t = await startTestServer();
    const client = await mcp(t.adminToken);
    const events = await reviewer();
    const asking = call(client, 'ask_question', {
      title: 'Which cache?',
      questions: [
        { id: 'cache', question: 'Which cache should the service use?', options: [{ label: 'Redis' }, { label: 'Memcached' }], allow_free_text: true },
      ],
      wait_seconds: 120,
    });
    const shown = await events.nextMatching((m) => m.type === 'request.created');
    expect(shown.format).toBe('mcp');
    const answered = await decide(t.api, shown.request, 'submit', { fields: { answers: { cache: { selected: ['Redis'], text: 'with persistence' } } } });
    expect(answered.status, answered.text).toBe(200);
    const result = await asking;
    expect(result.structuredContent).toEqual({ request: answered.body, answers: { cache: { selected: ['Redis'], text: 'with persistence' } } });

    const approving = call(client, 'request_approval', { title: 'Restart the worker', wait_seconds: 300 });
    const next = await events.nextMatching((m) => m.type === 'request.created');
    expect((await decide(t.api, next.request, 'approve')).status).toBe(200);
    expect((await approving).structuredContent.request.status).toBe('approved');
  });

  it('wait_for_decision answers when any of its requests ends, and tells a client that asked for progress that it still waits', async () => {
    const clock = createFakeClock();
    t = await startTestServer({}, { clock });
    const client = await mcp(t.adminToken);
    const a = (await call(client, 'request_approval', { title: 'A' })).structuredContent.request;
    const b = (await call(client, 'request_approval', { title: 'B' })).structuredContent.request;
    const progress: unknown[] = [];
    const waiting = client.callTool({ name: 'wait_for_decision', arguments: { ids: [a.id, b.id], max_wait_seconds: 300 } }, undefined, {
      onprogress: (p) => progress.push(p),
      resetTimeoutOnProgress: true,
    }) as Promise<any>;
    await expect.poll(() => t.server.deps.waiters.count()).toBe(2);
    clock.advance(10_000);
    await expect.poll(() => progress.length).toBe(1);
    expect((await t.api.post(`/v1/requests/${b.id}/cancel`)).status).toBe(200);
    const result = await waiting;
    expect(result.structuredContent.requests.map((r: { id: string; status: string }) => [r.id, r.status])).toEqual([
      [a.id, 'pending'],
      [b.id, 'cancelled'],
    ]);
    expect(t.server.deps.waiters.count()).toBe(0);

    // Nothing ends: the wait runs out at max_wait_seconds and answers the pending requests.
    const timedOut = call(client, 'wait_for_decision', { ids: [a.id], max_wait_seconds: 300 });
    await expect.poll(() => t.server.deps.waiters.count()).toBe(1);
    clock.advance(300_000);
    expect((await timedOut).structuredContent.requests[0].status).toBe('pending');
  });

  it('a submit token sees and ends only its own requests; the errors are the HTTP API messages as isError results', async () => {
    t = await startTestServer();
    const a = await t.submitClient('agent-a');
    const b = await t.submitClient('agent-b');
    const clientA = await mcp(a.token);
    const clientB = await mcp(b.token);
    const mine = (await call(clientA, 'request_approval', { title: 'A thing' })).structuredContent.request;
    const theirs = (await call(clientB, 'request_approval', { title: 'B thing' })).structuredContent.request;

    for (const [tool, args] of [
      ['get_request', { id: theirs.id }],
      ['cancel_request', { id: theirs.id }],
      ['wait_for_decision', { ids: [mine.id, theirs.id], max_wait_seconds: 0 }],
    ] as const) {
      const res = await call(clientA, tool, args);
      expect(res.isError, tool).toBe(true);
      expect(res.content[0].text, tool).toBe(`request ${theirs.id} not found`);
    }
    expect((await show(t.api, theirs.id)).status).toBe('pending');
    expect((await call(clientA, 'list_requests', {})).structuredContent.requests.map((r: { id: string }) => r.id)).toEqual([mine.id]);
    expect((await call(await mcp(t.adminToken), 'list_requests', { status: 'pending' })).structuredContent.requests.map((r: { id: string }) => r.id)).toEqual([
      theirs.id,
      mine.id,
    ]);

    const cancelled = await call(clientA, 'cancel_request', { id: mine.id });
    expect(cancelled.structuredContent.request.status).toBe('cancelled');
    const again = await call(clientA, 'cancel_request', { id: mine.id });
    expect(again.isError).toBe(true);
    expect(again.content[0].text).toBe(`request ${mine.id} is already cancelled`);
  });

  it('takes timeout none or null as no expiry, as a handup body does', async () => {
    t = await startTestServer();
    const client = await mcp(t.adminToken);
    // No expiry, as in a handup body: "none" or null.
    for (const timeout of [null, 'none']) {
      const open = await call(client, 'request_approval', { title: `Keep open ${timeout}`, timeout });
      expect(open.isError, open.content[0].text).toBeFalsy();
      expect(open.structuredContent.request).toMatchObject({ timeout: null, expires_at: null });
      const asked = await call(client, 'ask_question', {
        title: `Open question ${timeout}`,
        questions: [{ id: 'q', question: 'Which?', allow_free_text: true }],
        timeout,
      });
      expect(asked.isError, asked.content[0].text).toBeFalsy();
      expect(asked.structuredContent.request.expires_at).toBeNull();
    }
  });

  it('refuses bad tool input naming the field, storing nothing; dedupe_key returns the pending request', async () => {
    t = await startTestServer();
    const client = await mcp(t.adminToken);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['request_approval', { title: '' }, 'title'],
      ['request_approval', { title: 'x'.repeat(600) }, 'title: must be at most 512 bytes'],
      ['request_approval', { title: 'ok', wait_seconds: 301 }, 'wait_seconds'],
      ['request_approval', { title: 'ok', timeout: '10' }, 'timeout'],
      ['request_approval', { title: 'ok', colour: 'red' }, 'colour'],
      [
        'request_approval',
        {
          title: 'ok',
          options: [
            { id: 'a', label: 'A', outcome: 'approve' },
            { id: 'a', label: 'B', outcome: 'deny' },
          ],
        },
        'duplicate option id',
      ],
      ['ask_question', { title: 'q', questions: [] }, 'questions'],
      ['wait_for_decision', { ids: Array.from({ length: 51 }, (_, i) => `id-${i}`) }, 'ids'],
      ['list_requests', { limit: 201 }, 'limit'],
    ];
    for (const [tool, args, names] of cases) {
      const res = await call(client, tool, args);
      expect(res.isError, `${tool} ${JSON.stringify(args).slice(0, 60)}`).toBe(true);
      expect(res.content[0].text).toContain(names);
    }
    expect(await requestCount(t.api)).toBe(0);

    // Word for word what the HTTP API answers for the same body, not the MCP SDK's own wording.
    for (const body of [
      { title: 'ok', colour: 'red' },
      { title: 7 },
      { title: '' },
      { title: '  ' },
      { summary: 'no title' },
      { title: 'ok', risk: 'extreme' },
    ]) {
      const res = await call(client, 'request_approval', body);
      const rest = await t.api.post('/v1/requests', body);
      expect(rest.status).toBe(400);
      expect(res.isError).toBe(true);
      expect(res.content[0].text).toBe(rest.body.error);
    }
    expect((await call(client, 'list_requests', { limit: 0 })).content[0].text).toBe('limit: Too small: expected number to be >=1');
    expect(await requestCount(t.api)).toBe(0);

    const first = (await call(client, 'request_approval', { title: 'Rotate keys', dedupe_key: 'rotate' })).structuredContent.request;
    const second = (await call(client, 'request_approval', { title: 'Rotate keys', dedupe_key: 'rotate' })).structuredContent.request;
    expect(second.id).toBe(first.id);
    const conflict = await call(client, 'request_approval', { title: 'Rotate other keys', dedupe_key: 'rotate' });
    expect(conflict.isError).toBe(true);
    expect(conflict.content[0].text).toContain(`pending request ${first.id}`);
    expect(await requestCount(t.api)).toBe(1);
  });

  it('is 401 without a token or with a revoked one, 405 for GET and DELETE', async () => {
    t = await startTestServer();
    await expect(mcp(null)).rejects.toThrow();
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const headers = { accept: 'application/json, text/event-stream' };
    expectError(await t.api.request('POST', '/mcp', initialize, { token: null, headers }), 401, 'unauthorized');
    const agent = await t.submitClient('gone');
    expect((await t.api.delete('/v1/tokens/gone')).status).toBe(200);
    expectError(await t.api.request('POST', '/mcp', initialize, { token: agent.token, headers }), 401, 'unauthorized');
    const get = await t.api.get('/mcp');
    expectError(get, 405, 'method_not_allowed');
    expect(get.headers.get('allow')).toBe('POST');
    expectError(await t.api.delete('/mcp'), 405, 'method_not_allowed');
    expect(await requestCount(t.api)).toBe(0);
  });

  it('refuses a foreign Origin with 403 (DNS rebinding); its own Origin, or none, is served', async () => {
    t = await startTestServer();
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const accept = 'application/json, text/event-stream';
    expectError(await t.api.request('POST', '/mcp', initialize, { headers: { accept, origin: 'http://evil.example' } }), 403, 'forbidden', 'Origin');
    expect((await t.api.request('POST', '/mcp', initialize, { headers: { accept, origin: t.url } })).status).toBe(200);
    expect((await t.api.request('POST', '/mcp', initialize, { headers: { accept } })).status).toBe(200);
  });

  it('answers an unknown tool with a JSON-RPC error, not a tool result', async () => {
    t = await startTestServer();
    const client = await mcp(t.adminToken);
    await expect(call(client, 'nope', {})).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: nope') });
  });

  it('ends a call that waits when its client cancels it (notifications/cancelled), sending no result; another client of the token cannot', async () => {
    t = await startTestServer();
    const post = (message: unknown, session: string) =>
      fetch(`${t.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${t.adminToken}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          'mcp-session-id': session,
        },
        body: JSON.stringify(message),
      });
    const session = async (name: string) => {
      const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name, version: '1' } };
      const res = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: init }, '');
      return res.headers.get('mcp-session-id')!;
    };
    const [mine, theirs] = [await session('same-client'), await session('same-client')];
    expect(mine).not.toBe(theirs);
    const call = (title: string) => ({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'request_approval', arguments: { title, wait_seconds: 300 } },
    });
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'changed my mind' } };

    // Another client of the same token sends a cancel for the same id: the call goes on, and is answered.
    const first = (await post(call('Keep me'), mine)).text();
    await expect.poll(() => requestCount(t.api)).toBe(1);
    expect((await post(cancel, theirs)).status).toBe(202);
    const [kept] = (await t.api.get('/v1/requests')).body;
    expect((await decide(t.api, kept, 'approve')).status).toBe(200);
    expect(await first).toContain('"result"');

    // Its own client's cancel ends it. Without it this would wait the full 300 s (and the test time out).
    const second = (await post(call('Cancel me'), mine)).text();
    await expect.poll(() => requestCount(t.api)).toBe(2);
    expect((await post(cancel, mine)).status).toBe(202);
    expect(await second).not.toContain('"result"');
  });
});

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { decide, expectError, show } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectWs } from '../helpers/ws-client.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/**
 * A token revoked while one of its calls waits for a decision is 401 "at once": the call does not
 * get the decision it was waiting for, on any of the ways to wait.
 */
describe('a token revoked while its call waits', () => {
  it('gets 401, not the decision: a long-poll, a native ?wait=, a Claude Code hook', async () => {
    t = await startTestServer();
    const agent = await t.submitClient('agent-a');
    const created = (await agent.api.post('/v1/requests', { title: 'Deploy' })).body;
    const longPoll = agent.api.get(`/v1/requests/${created.id}/wait?timeout=30s`);
    const hook = agent.api.post('/v1/formats/claude-code/hook?wait=30s', {
      session_id: 's-1',
      cwd: '/tmp',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'npm run deploy' },
      tool_use_id: 'toolu_1',
    });
    const native = agent.api.post('/v1/formats/ask/requests?wait=30s', {
      method: 'session/event',
      params: { sessionId: 's-2', event: { type: 'approval.required', seq: 1, payload: { id: 'act_1', toolName: 'bash', args: { command: 'make deploy' } } } },
    });
    await expect.poll(async () => (await t!.api.get('/v1/requests?status=pending')).body.length).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await t.api.delete('/v1/tokens/agent-a')).status).toBe(200);
    for (const r of (await t.api.get('/v1/requests?status=pending')).body) expect((await decide(t.api, r, r.options[0].id)).status).toBe(200);
    for (const call of [longPoll, hook, native]) expectError(await call, 401, 'unauthorized', 'revoked');
  });

  it('a bridge socket closes with 4401 instead of pushing the reply', async () => {
    t = await startTestServer();
    const agent = await t.submitClient('agent-b');
    const bridge = await connectWs(`${t.wsUrl}/v1/formats/ask/ws?session=s-9`, agent.token);
    bridge.send({
      method: 'session/event',
      params: { sessionId: 's-9', event: { type: 'approval.required', seq: 1, payload: { id: 'act_9', toolName: 'bash', args: { command: 'make deploy' } } } },
    });
    const accepted = await bridge.next();
    expect(accepted.type).toBe('countersign.accepted');
    expect((await t.api.delete('/v1/tokens/agent-b')).status).toBe(200);
    const record = await show(t.api, accepted.id);
    expect((await decide(t.api, record, record.options[0]!.id)).status).toBe(200);
    expect(await bridge.closed).toBe(4401);
    expect(bridge.messages.slice(1)).toEqual([expect.objectContaining({ type: 'countersign.error', code: 'unauthorized' })]);
  });

  it('an MCP call waiting for the decision gets an error, not the decision', async () => {
    t = await startTestServer();
    const agent = await t.submitClient('agent-c');
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.token}` } } }));
    const call = client.callTool({ name: 'request_approval', arguments: { title: 'Deploy', wait_seconds: 30 } });
    await expect.poll(async () => (await t!.api.get('/v1/requests?status=pending')).body.length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await t.api.delete('/v1/tokens/agent-c')).status).toBe(200);
    const [r] = (await t.api.get('/v1/requests?status=pending')).body;
    expect((await decide(t.api, r, 'approve')).status).toBe(200);
    const result = (await call) as { isError?: boolean; content: Array<{ text: string }>; structuredContent?: unknown };
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toContain('revoked');
    expect(result.structuredContent).toBeUndefined();
    await client.close();
  });
});

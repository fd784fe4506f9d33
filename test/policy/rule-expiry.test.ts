import { afterEach, describe, expect, it } from 'vitest';
import { createFakeClock } from '../helpers/fake-clock.js';
import { createRequest, decide } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectWs, type WsClient } from '../helpers/ws-client.js';

/**
 * Stored rules that expire, against the real daemon: the expiry is a change like any other,
 * deleted when it comes (not at the next rule stored), audited `rule.expired` by `timeout`,
 * announced with `rules.changed`, and the policy version moves.
 */

const HOUR = 3_600_000;

let t: TestServer | undefined;
let restarted: TestServer | undefined;
let ws: WsClient | undefined;
afterEach(async () => {
  ws?.socket.close();
  // The restarted daemon first: the first one's close removes the data both use.
  await restarted?.close();
  await t?.close();
  t = restarted = ws = undefined;
});

const version = async () => Number((await t!.sql<{ version: number }>('SELECT version FROM policy_state WHERE id = 1'))[0]!.version);
const ruleIds = async () => (await t!.api.get('/v1/rules')).body.map((r: any) => r.id);
const policyAudit = async () =>
  (await t!.api.get('/v1/policy/audit')).body as Array<{ event: string; actor: string; at: number; subject: string; details: any }>;

/** The next event after a request created now: proves nothing was sent before it. */
async function nothingSentSince(title: string) {
  const r = await createRequest(t!.api, { title });
  expect(await ws!.next()).toMatchObject({ type: 'request.created', request: { id: r.id } });
}

describe('stored rules expire', () => {
  it('a rule with expires_at is deleted when it expires: rule.expired by timeout, rules.changed, the version moves; nothing when nothing expires', async () => {
    const clock = createFakeClock(Date.UTC(2026, 0, 1));
    t = await startTestServer({}, { clock });
    ws = await connectWs(`${t.wsUrl}/v1/events`, t.adminToken);
    const expiresAt = clock.now() + HOUR;
    const rule = { id: 'for-an-hour', match: { title: '^Deploy' }, action: 'approve' };
    expect((await t.api.post('/v1/rules', { ...rule, expires_at: expiresAt })).status).toBe(201);
    expect((await t.api.post('/v1/rules', { id: 'keep', match: { agent: 'bot' }, action: 'deny' })).status).toBe(201);
    expect(await ws.next()).toEqual({ type: 'rules.changed' });
    expect(await ws.next()).toEqual({ type: 'rules.changed' });
    const before = await version();

    clock.advance(HOUR - 1);
    await t.server.settled();
    await nothingSentSince('Before the hour');
    expect(await ruleIds()).toEqual(['for-an-hour', 'keep']);

    clock.advance(1);
    expect(await ws.next()).toEqual({ type: 'rules.changed' });
    expect(await ruleIds()).toEqual(['keep']);
    expect(await t.count('rules')).toBe(1);
    expect(await version()).toBe(before + 1);
    const log = await policyAudit();
    expect(log[0]).toEqual({
      id: expect.any(Number),
      event: 'rule.expired',
      actor: 'timeout',
      at: expiresAt,
      subject: 'for-an-hour',
      details: { rule, expires_at: expiresAt },
    });
    expect(log.map((e) => [e.event, e.actor, e.subject])).toEqual([
      ['rule.expired', 'timeout', 'for-an-hour'],
      ['rule.added', 'admin', 'keep'],
      ['rule.added', 'admin', 'for-an-hour'],
    ]);
    expect((await createRequest(t.api, { title: 'Deploy now' })).status).toBe('pending');

    // Nothing left to expire: time passing sends nothing, audits nothing, moves nothing.
    await ws.next(); // the request just created
    clock.advance(48 * HOUR);
    await t.server.settled();
    await nothingSentSince('Two days later');
    expect(await version()).toBe(before + 1);
    expect(await policyAudit()).toHaveLength(3);
  });

  it('a session-scoped approval ends when policy.session_scope_ttl runs out, as a change of its own', async () => {
    const clock = createFakeClock(Date.UTC(2026, 0, 1));
    t = await startTestServer({ policy: { session_scope_ttl: '2h' } }, { clock });
    ws = await connectWs(`${t.wsUrl}/v1/events`, t.adminToken);
    const command = {
      title: 'Run make build',
      kind: 'command',
      source: { agent: 'claude-code', session: 's-1' },
      previews: [{ type: 'command', command: { shell: 'make build' } }],
    };
    const first = await createRequest(t.api, command);
    const ruleId = (await decide(t.api, first, 'approve', { scope: 'session' })).body.decision.rule_id;
    await ws.nextMatching((m) => m.type === 'rules.changed');
    expect((await createRequest(t.api, command)).status).toBe('approved');
    const before = await version();

    clock.advance(2 * HOUR);
    expect(await ws.nextMatching((m) => m.type === 'rules.changed')).toEqual({ type: 'rules.changed' });
    expect(await ruleIds()).toEqual([]);
    expect(await version()).toBe(before + 1);
    expect((await policyAudit())[0]).toMatchObject({
      event: 'rule.expired',
      actor: 'timeout',
      subject: ruleId,
      details: { rule: { id: ruleId, action: 'approve', match: { agent: 'claude-code', session: 's-1' } }, expires_at: clock.now() },
    });
    expect((await createRequest(t.api, command)).status).toBe('pending');
  });

  it('rules that expired while the daemon was down are deleted, and audited, when it starts', async () => {
    const clock = createFakeClock(Date.UTC(2026, 0, 1));
    t = await startTestServer({}, { clock });
    expect((await t.api.post('/v1/rules', { id: 'brief', match: { agent: 'bot' }, action: 'approve', expires_at: clock.now() + 60_000 })).status).toBe(201);
    await t.server.close();
    clock.advance(HOUR);
    restarted = await startTestServer({ data_dir: t.dataDir }, { clock });
    expect((await restarted.api.get('/v1/rules')).body).toEqual([]);
    expect((await restarted.api.get('/v1/policy/audit')).body[0]).toMatchObject({ event: 'rule.expired', actor: 'timeout', subject: 'brief', at: clock.now() });
  });
});

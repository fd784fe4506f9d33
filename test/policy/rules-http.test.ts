import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config, DeepPartial } from '../../src/config.js';
import { runCli } from '../helpers/cli-process.js';
import { createFakeClock } from '../helpers/fake-clock.js';
import { loadFixtures } from '../helpers/fixtures.js';
import { createRequest, decide, expectError } from '../helpers/request-api.js';
import { createApiClient, startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectValidRequest } from '../helpers/upstream-schemas.js';
import { connectWs } from '../helpers/ws-client.js';

/**
 * Rules over HTTP against the real daemon: the API, first match across the config
 * file and the store, every action applied inside the creating transaction (terminal record,
 * events, audit, native reply, callback outbox), the requests rules never decide, and rules
 * kept across restarts.
 */

const CONFIG_RULES = [
  { id: 'read-only-git', match: { agent: 'claude-code', kind: 'command', command: '^git (status|diff|log)( |$)' }, action: 'approve' },
  { id: 'no-force-push', match: { command: 'git push .*(--force|-f)( |$)' }, action: 'deny', feedback: 'Force pushes need a person.' },
  { id: 'prod-is-high-risk', match: { repo: 'acme/*', cwd: '**/deploy/**' }, action: 'ask', risk: 'high', timeout: '10m' },
  { id: 'quiet-hook-notices', match: { agent: 'my-hook', kind: 'info' }, action: 'dismiss' },
];

const command = (shell: string, extra: Record<string, unknown> = {}) => ({
  title: `Run ${shell}`,
  kind: 'command',
  source: { agent: 'claude-code', session: 's-1', repo: 'acme/api', cwd: '/home/dev/api' },
  previews: [{ type: 'command', command: { shell } }],
  ...extra,
});

let t: TestServer | undefined;
let extra: TestServer | undefined;
afterEach(async () => {
  await extra?.close();
  await t?.close();
  t = extra = undefined;
});

const start = (overrides: DeepPartial<Config> = {}, opts: Parameters<typeof startTestServer>[1] = {}) =>
  startTestServer({ rules: CONFIG_RULES as never, ...overrides }, opts);
const audit = async (id: string) => (await t!.api.get(`/v1/requests/${id}/audit`)).body as Array<{ event: string; actor: string; details?: any }>;

describe('rules API', () => {
  it('lists config rules, then stored rules oldest first, with hits; adds and removes stored rules', async () => {
    t = await start();
    const add = (id: string, match: Record<string, unknown>) => t!.api.post('/v1/rules', { id, match, action: 'approve' });
    const a = await add('zz-tests', { command: '^npm test' });
    expect(a.status, a.text).toBe(201);
    expect(a.body).toMatchObject({
      id: 'zz-tests',
      source: 'stored',
      action: 'approve',
      hits: 0,
      last_hit_at: null,
      expires_at: null,
      created_at: expect.any(Number),
    });
    expect((await add('aa-lint', { command: '^npm run lint' })).status).toBe(201);

    const list = await t.api.get('/v1/rules');
    expect(list.status).toBe(200);
    expect(list.body.map((r: any) => [r.id, r.source])).toEqual([
      ['read-only-git', 'config'],
      ['no-force-push', 'config'],
      ['prod-is-high-risk', 'config'],
      ['quiet-hook-notices', 'config'],
      ['zz-tests', 'stored'],
      ['aa-lint', 'stored'],
    ]);
    expect(list.body[1]).toEqual({
      id: 'no-force-push',
      source: 'config',
      match: CONFIG_RULES[1]!.match,
      action: 'deny',
      feedback: 'Force pushes need a person.',
      hits: 0,
      last_hit_at: null,
    });

    const removed = await t.api.delete('/v1/rules/zz-tests');
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body).toMatchObject({ id: 'zz-tests', source: 'stored' });
    expectError(await t.api.delete('/v1/rules/zz-tests'), 404, 'not_found');
    expectError(await t.api.delete('/v1/rules/read-only-git'), 409, 'rule_in_config');
    expect((await t.api.get('/v1/rules')).body.map((r: any) => r.id)).not.toContain('zz-tests');
  });

  it('refuses an id already taken, in the config file or the store (409 rule_exists)', async () => {
    t = await start();
    expectError(await t.api.post('/v1/rules', { id: 'read-only-git', match: { agent: 'x' }, action: 'deny' }), 409, 'rule_exists');
    expect((await t.api.post('/v1/rules', { id: 'mine', match: { agent: 'x' }, action: 'deny' })).status).toBe(201);
    expectError(await t.api.post('/v1/rules', { id: 'mine', match: { agent: 'y' }, action: 'approve' }), 409, 'rule_exists');
    expect(await t.count('rules')).toBe(1);
  });

  it.each([
    ['a bad regex', { id: 'x', match: { command: '(' }, action: 'approve' }, 'match.command'],
    ['a bad glob', { id: 'x', match: { cwd: 'a**' }, action: 'approve' }, 'match.cwd'],
    ['an empty match', { id: 'x', match: {}, action: 'approve' }, 'match'],
    ['an unknown matcher', { id: 'x', match: { colour: 'red' }, action: 'approve' }, 'match.colour'],
    ['a dismiss rule not for info', { id: 'x', match: { agent: 'a' }, action: 'dismiss' }, 'match.kind'],
    ['feedback on an approve', { id: 'x', match: { agent: 'a' }, action: 'approve', feedback: 'hm' }, 'feedback'],
    ['a bad id', { id: 'Not OK', match: { agent: 'a' }, action: 'approve' }, 'id'],
    ['an unknown action', { id: 'x', match: { agent: 'a' }, action: 'allow' }, 'action'],
    ['an expiry in the past', { id: 'x', match: { agent: 'a' }, action: 'approve', expires_at: 1000 }, 'expires_at'],
  ])('refuses %s with 400 invalid_rule naming the key, storing nothing', async (_name, rule, key) => {
    t ??= await start();
    const res = await t.api.post('/v1/rules', rule);
    expectError(res, 400, 'invalid_rule', `${key}:`);
    expect(await t.count('rules')).toBe(0);
    expect(await t.count('policy_audit')).toBe(0);
  });

  it('announces every change on /v1/events and audits it (who, what)', async () => {
    t = await start();
    const ws = await connectWs(`${t.wsUrl}/v1/events`, t.adminToken);
    await t.api.post('/v1/rules', { id: 'mine', match: { agent: 'x' }, action: 'deny' });
    expect(await ws.next()).toEqual({ type: 'rules.changed' });
    await t.api.delete('/v1/rules/mine');
    expect(await ws.next()).toEqual({ type: 'rules.changed' });
    ws.socket.close();
    const log = await t.api.get('/v1/policy/audit');
    expect(log.body.map((e: any) => [e.event, e.actor, e.subject])).toEqual([
      ['rule.removed', 'admin', 'mine'],
      ['rule.added', 'admin', 'mine'],
    ]);
    expect(log.body[1].details.rule).toEqual({ id: 'mine', match: { agent: 'x' }, action: 'deny' });
  });

  it('is admin only', async () => {
    t = await start();
    const { api } = await t.submitClient('agent');
    expectError(await api.get('/v1/rules'), 403, 'forbidden');
    expectError(await api.post('/v1/rules', { id: 'mine', match: { agent: 'x' }, action: 'approve' }), 403, 'forbidden');
    expectError(await api.post('/v1/rules/test', command('git status')), 403, 'forbidden');
    expect(await t.count('rules')).toBe(0);
  });
});

describe('rules at creation', () => {
  it('approve: 201 with the terminal record, decided_by rule; audit created then decided by rule:<id>; events created (final) then decided; a hit', async () => {
    t = await start();
    const ws = await connectWs(`${t.wsUrl}/v1/events`, t.adminToken);
    const res = await t.api.post('/v1/requests', command('git status --short'));
    expect(res.status, res.text).toBe(201);
    expectValidRequest(res.body);
    expect(res.body.status).toBe('approved');
    expect(res.body.decision).toMatchObject({
      option: 'approve',
      outcome: 'approve',
      decided_by: 'rule',
      rule_id: 'read-only-git',
      content_hash: res.body.content_hash,
      decided_at: expect.any(Number),
    });
    expect((await audit(res.body.id)).map((a) => [a.event, a.actor])).toEqual([
      ['created', 'admin'],
      ['decided', 'rule:read-only-git'],
    ]);
    const created = await ws.next();
    const decided = await ws.next();
    ws.socket.close();
    expect([created.type, created.request.status, decided.type, decided.request.status]).toEqual([
      'request.created',
      'approved',
      'request.decided',
      'approved',
    ]);
    const rule = (await t.api.get('/v1/rules')).body.find((r: any) => r.id === 'read-only-git');
    expect(rule).toMatchObject({ hits: 1, last_hit_at: res.body.decision.decided_at });
    // The long-poll answers at once.
    expect((await t.api.get(`/v1/requests/${res.body.id}/wait?timeout=5s`)).body.status).toBe('approved');
  });

  it('deny carries the rule feedback; dismiss ends an info notice with option dismiss', async () => {
    t = await start();
    const denied = await createRequest(t.api, command('git push origin main --force'));
    expect(denied.status).toBe('denied');
    expect(denied.decision).toMatchObject({ option: 'deny', feedback: 'Force pushes need a person.', decided_by: 'rule', rule_id: 'no-force-push' });
    const notice = await createRequest(t.api, { title: 'Build finished', kind: 'info', source: { agent: 'my-hook' } });
    expect(notice.status).toBe('dismissed');
    expect(notice.decision).toMatchObject({ option: 'dismiss', decided_by: 'rule', rule_id: 'quiet-hook-notices' });
  });

  it('ask keeps the request pending with the rule risk and timeout, and auto mode does not apply', async () => {
    t = await start();
    await t.api.request('PUT', '/v1/auto', { mode: 'all' });
    const r = await createRequest(
      t.api,
      command('kubectl apply -f prod.yaml', { risk: 'low', timeout: '1h', source: { agent: 'claude-code', repo: 'acme/infra', cwd: '/srv/acme/deploy' } }),
    );
    expect(r.status).toBe('pending');
    expect(r.risk).toBe('high');
    expect(r.timeout).toBe('10m');
    expect(r.expires_at).toBe(r.created_at + 600_000);
    expect((await audit(r.id))[0]).toMatchObject({ event: 'created', details: { rule_id: 'prod-is-high-risk', action: 'ask' } });
    const rule = (await t.api.get('/v1/rules')).body.find((x: any) => x.id === 'prod-is-high-risk');
    expect(rule.hits).toBe(1);
  });

  it('first match wins: a config rule before a stored rule, a stored rule before a later one', async () => {
    t = await start();
    await t.api.post('/v1/rules', { id: 'deny-all-git', match: { command: '^git' }, action: 'deny' });
    await t.api.post('/v1/rules', { id: 'approve-all-git', match: { command: '^git' }, action: 'approve' });
    expect((await createRequest(t.api, command('git diff'))).decision.rule_id).toBe('read-only-git');
    expect((await createRequest(t.api, command('git checkout main'))).decision.rule_id).toBe('deny-all-git');
  });

  it('matches on the submit token name (integration) and the wire format', async () => {
    t = await start();
    await t.api.post('/v1/rules', { id: 'ci-formats', match: { integration: 'ci-bot', format: 'handup', title: '^Nightly' }, action: 'approve' });
    const ci = await t.submitClient('ci-bot');
    const other = await t.submitClient('other-bot');
    expect((await ci.api.post('/v1/requests', { title: 'Nightly build' })).body.status).toBe('approved');
    expect((await other.api.post('/v1/requests', { title: 'Nightly build' })).body.status).toBe('pending');
  });

  it.each([
    [
      'a question',
      {
        title: 'Which?',
        kind: 'question',
        source: { agent: 'claude-code' },
        input: { questions: [{ id: 'q', question: 'Which one?', options: [{ label: 'A' }] }] },
      },
      /question/,
    ],
    ['a form to fill in', { title: 'Pick', source: { agent: 'claude-code' }, input: { fields: [{ name: 'x', type: 'boolean' }] } }, /fields/],
    [
      'a request without an approve option',
      { title: 'Only no', source: { agent: 'claude-code' }, options: [{ id: 'no', label: 'No', outcome: 'deny' }] },
      /no approve option/,
    ],
  ])('never decides %s: pending, audited rule.skipped with the reason', async (_name, body, reason) => {
    t = await start();
    await t.api.post('/v1/rules', { id: 'everything', match: { agent: 'claude-code' }, action: 'approve' });
    const r = await createRequest(t.api, body);
    expect(r.status).toBe('pending');
    const rows = await audit(r.id);
    expect(rows.map((a) => [a.event, a.actor])).toEqual([
      ['created', 'admin'],
      ['rule.skipped', 'rule:everything'],
    ]);
    expect(rows[1]!.details.reason).toMatch(reason);
  });

  it('what a deny rule matched but cannot decide never passes by its timeout: on_timeout approve becomes expire', async () => {
    const clock = createFakeClock(Date.UTC(2026, 0, 1));
    t = await start({}, { clock });
    const tokens = await t.api.post('/v1/tokens', { name: 'bot', grants: ['timeout_approve'] });
    expect(tokens.status, tokens.text).toBe(201);
    const bot = createApiClient(t.url, tokens.body.token);
    // No deny option for the rule to pick, and an approval when the time runs out.
    const body = command('git push --force origin main', { options: [{ id: 'go', label: 'Go', outcome: 'approve' }], on_timeout: 'approve', timeout: '1m' });
    const created = await bot.post('/v1/requests', body);
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ status: 'pending', on_timeout: 'expire' });
    expectValidRequest(created.body);
    const rows = await audit(created.body.id);
    expect(rows[1]).toMatchObject({ event: 'rule.skipped', actor: 'rule:no-force-push', details: { rule_id: 'no-force-push', on_timeout_sent: 'approve' } });
    clock.advance(60_000);
    // The clock no longer moves: the long-poll answers once the expiry is written.
    const ended = await bot.get(`/v1/requests/${created.body.id}/wait?timeout=30s`);
    expect(ended.body).toMatchObject({ status: 'expired', decision: null });
    // Without a deny rule the same request still times out approved (the token has the grant).
    const free = await bot.post('/v1/requests', { ...body, previews: [{ type: 'command', command: { shell: 'git fetch' } }] });
    expect(free.body.on_timeout).toBe('approve');
  });

  it('a dedupe hit returns the existing request and evaluates nothing', async () => {
    t = await start();
    const first = await t.api.post('/v1/requests', command('git status', { dedupe_key: 'k', source: { agent: 'someone-else' } }));
    await t.api.post('/v1/rules', { id: 'late', match: { agent: 'someone-else' }, action: 'approve' });
    const again = await t.api.post('/v1/requests', command('git status', { dedupe_key: 'k', source: { agent: 'someone-else' } }));
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: first.body.id, status: 'pending' });
    expect((await t.api.get('/v1/rules')).body.find((r: any) => r.id === 'late').hits).toBe(0);
  });

  it('a native request decided by a rule gets its native reply in the create response', async () => {
    t = await start();
    const fx = Object.fromEntries(loadFixtures('paperclip'))['e2e-request.json'];
    await t.api.post('/v1/rules', { id: 'acpx-edits', match: { agent: 'acpx', format: 'paperclip' }, action: 'approve' });
    const res = await t.api.post('/v1/formats/paperclip/requests', fx.frame);
    expect(res.status, res.text).toBe(201);
    expect(res.body.request).toMatchObject({ status: 'approved', decision: { option: 'accept', decided_by: 'rule', rule_id: 'acpx-edits' } });
    expect(res.body.reply).toMatchObject({ type: 'request.resolve', payload: { requestId: 'permission-1', resolution: { action: 'accept' } } });
    const reply = await t.api.get(`/v1/formats/paperclip/requests/${res.body.request.id}/reply`);
    expect(reply.body.reply).toEqual(res.body.reply);
  });

  it('a request decided by a rule gets its callback delivered, the outbox row written with the decision', async () => {
    const received: Array<{ body: any }> = [];
    let got: () => void = () => {};
    const arrived = new Promise<void>((resolve) => (got = resolve));
    const receiver: Server = createServer((req: IncomingMessage, res) => {
      let text = '';
      req.on('data', (c) => (text += c));
      req.on('end', () => {
        received.push({ body: JSON.parse(text) });
        res.writeHead(204).end();
        got();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      t = await start({ callbacks: { allowlist: ['127.0.0.1'] } });
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cb`;
      const r = await createRequest(t.api, command('git log -3', { callback_url: url }));
      expect(r.status).toBe('approved');
      await arrived;
      expect(received[0]!.body).toMatchObject({ type: 'request.decided', data: { request: { id: r.id, status: 'approved' } } });
    } finally {
      receiver.close();
    }
  });

  it('history outcome auto lists what rules (and auto mode, and hooks) decided', async () => {
    t = await start();
    const byRule = await createRequest(t.api, command('git status'));
    const byPerson = await createRequest(t.api, { title: 'Other' });
    await decide(t.api, byPerson, 'approve');
    const auto = await t.api.get('/v1/history?outcome=auto');
    expect(auto.body.items.map((i: any) => i.request.id)).toEqual([byRule.id]);
    const either = await t.api.get('/v1/history?outcome=auto,approved');
    expect(either.body.items.map((i: any) => i.request.id).sort()).toEqual([byRule.id, byPerson.id].sort());
    expectError(await t.api.get('/v1/history?outcome=robot'), 400, 'invalid_request', 'outcome');
  });
});

describe('POST /v1/rules/test', () => {
  it('says which rule a request meets and what it would do, storing and counting nothing', async () => {
    t = await start();
    const hit = await t.api.post('/v1/rules/test', command('git log --oneline'));
    expect(hit.status, hit.text).toBe(200);
    expect(hit.body).toMatchObject({ rule: { id: 'read-only-git', source: 'config' }, action: 'approve', would_decide: 'approve' });
    const ask = await t.api.post('/v1/rules/test', command('ls', { source: { repo: 'acme/x', cwd: '/a/deploy' } }));
    expect(ask.body).toMatchObject({ rule: { id: 'prod-is-high-risk' }, action: 'ask', would_decide: null });
    const none = await t.api.post('/v1/rules/test', { title: 'Unrelated' });
    expect(none.body).toEqual({ rule: null, action: 'no_match', would_decide: null });
    const skipped = await t.api.post('/v1/rules/test', command('git status', { options: [{ id: 'no', label: 'No', outcome: 'deny' }] }));
    expect(skipped.body).toMatchObject({ action: 'approve', would_decide: null, skipped: expect.stringMatching(/no approve option/) });
    expect(await t.count('requests')).toBe(0);
    expect((await t.api.get('/v1/rules')).body.every((r: any) => r.hits === 0)).toBe(true);
  });

  it('takes a native frame as {format, frame}, and an integration to assume', async () => {
    t = await start();
    await t.api.post('/v1/rules', { id: 'acpx', match: { agent: 'acpx', format: 'paperclip', integration: 'runner' }, action: 'approve' });
    const fx = Object.fromEntries(loadFixtures('paperclip'))['e2e-request.json'];
    const res = await t.api.post('/v1/rules/test', { format: 'paperclip', frame: fx.frame, integration: 'runner' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ rule: { id: 'acpx' }, action: 'approve', would_decide: 'accept' });
    expect((await t.api.post('/v1/rules/test', { format: 'paperclip', frame: fx.frame })).body.rule).toBeNull();
    expect(await t.count('requests')).toBe(0);
  });

  it('refuses a bad request body and an unknown format with 400 naming the field', async () => {
    t = await start();
    expectError(await t.api.post('/v1/rules/test', { title: '' }), 400, 'invalid_request', 'title');
    expectError(await t.api.post('/v1/rules/test', { format: 'paperclip', frame: { nope: 1 } }), 400, 'invalid_frame');
    expectError(await t.api.post('/v1/rules/test', { format: 'smtp', frame: {} }), 400, 'invalid_request', 'format: unknown format "smtp"');
  });

  it('evaluates a native frame already stored and past its deadline as its stored request', async () => {
    const clock = createFakeClock(Date.parse('2026-08-04T00:04:00.000Z'));
    t = await startTestServer({ rules: CONFIG_RULES as never }, { clock });
    const frame = Object.fromEntries(loadFixtures('roll'))['interaction-approval-candidate.json'].frame;
    expect((await t.api.post('/v1/formats/roll/requests', frame)).status).toBe(201);
    clock.advance(2 * 60_000);
    const res = await t.api.post('/v1/rules/test', { format: 'roll', frame });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ rule: null, action: 'no_match', would_decide: null });
    expect(await t.count('requests')).toBe(1);

    // The same for a frame an agent's token sent: named by `integration`, it is found as that token's.
    const relay = await t.submitClient('relay');
    const other = { ...frame, interactionId: '8a9b0c1d-2e3f-4a5b-8c6d-7e8f9a0b1c22', expiresAt: new Date(clock.now() + 60_000).toISOString() };
    const sent = await relay.api.post('/v1/formats/roll/requests', other);
    expect(sent.status, sent.text).toBe(201);
    clock.advance(2 * 60_000);
    const asToken = await t.api.post('/v1/rules/test', { format: 'roll', frame: other, integration: 'relay' });
    expect(asToken.status, asToken.text).toBe(200);
    expect(await t.count('requests')).toBe(2);
  });
});

describe('config and restarts', () => {
  it.each([
    ["rules:\n  - {id: x, match: {command: '('}, action: approve}\n", 'rules.0.match.command: invalid regular expression'],
    ['rules:\n  - {id: x, match: {agent: a}, action: dismiss}\n', 'rules.0.match.kind: a dismiss rule must match kind: info'],
    ['rules:\n  - {id: x, match: {agent: a}, action: approve}\n  - {id: x, match: {agent: b}, action: deny}\n', 'rules.1.id: duplicate rule id "x"'],
    [
      'rules:\n  - {id: scope-ci, match: {tool: Deploy}, action: approve}\n',
      'rules.0.id: an approve rule named scope-… is held to what a scoped approval remembered',
    ],
    ['decide_hooks:\n  - {name: opa, exec: [/bin/true], url: "http://127.0.0.1:1/x"}\n', 'decide_hooks.0.exec: give exactly one of exec'],
    ['decide_hooks:\n  - {name: opa, exec: [/bin/true], timeout: 30d}\n', 'decide_hooks.0.timeout: must be a duration such as 2s or 10s, at most 1h'],
  ])('an invalid config file stops `countersign serve` with exit 4, naming the key', async (yaml, message) => {
    const dir = mkdtempSync(join(tmpdir(), 'countersign-rules-config-'));
    try {
      writeFileSync(join(dir, 'config.yaml'), yaml);
      const res = await runCli(['serve', '--config', join(dir, 'config.yaml')], {
        env: { COUNTERSIGN_DATA_DIR: dir, COUNTERSIGN_PORT: '0', COUNTERSIGN_ADMIN_TOKEN: 'config-test-admin-token-0123456789' },
      });
      expect(res.code, res.stderr).toBe(4);
      expect(res.stderr).toContain(message);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps stored rules and hits across a restart; a config rule id that clashes with a stored one stops the daemon', async () => {
    t = await start();
    await t.api.post('/v1/rules', { id: 'kept', match: { title: '^Keep' }, action: 'approve' });
    expect((await createRequest(t.api, command('git status'))).status).toBe('approved');
    const dataDir = t.dataDir;
    await t.server.close();
    extra = await start({ data_dir: dataDir });
    const rules = (await extra.api.get('/v1/rules')).body;
    expect(rules.map((r: any) => r.id)).toContain('kept');
    expect(rules.find((r: any) => r.id === 'read-only-git').hits).toBe(1);
    expect((await createRequest(extra.api, { title: 'Keep me' })).decision).toMatchObject({ decided_by: 'rule', rule_id: 'kept' });
    await extra.server.close();
    await expect(start({ data_dir: dataDir, rules: [{ id: 'kept', match: { agent: 'x' }, action: 'deny' }] as never })).rejects.toThrow(
      /rule id "kept" is already a stored rule/,
    );
    extra = await start({ data_dir: dataDir });
  });

  it('a stored rule that takes the id of a config rule no longer in the file starts with no hits', async () => {
    t = await start();
    expect((await createRequest(t.api, command('git status'))).decision).toMatchObject({ rule_id: 'read-only-git' });
    const dataDir = t.dataDir;
    await t.server.close();
    extra = await startTestServer({ data_dir: dataDir });
    const added = await extra.api.post('/v1/rules', { id: 'read-only-git', match: { title: '^Nothing like it' }, action: 'deny' });
    expect(added.status, added.text).toBe(201);
    expect(added.body).toMatchObject({ hits: 0, last_hit_at: null });
    expect((await extra.api.get('/v1/rules')).body).toEqual([expect.objectContaining({ id: 'read-only-git', hits: 0, last_hit_at: null })]);
  });
});

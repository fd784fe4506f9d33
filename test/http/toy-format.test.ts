import { afterEach, describe, expect, it } from 'vitest';
import { adapters } from '../../src/adapters/registry.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { durationMs } from '../../src/lib/durations.js';
import { decide, expectError, show } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { TOY_DEFAULT_TIMEOUT, TOY_FORMAT, toyAdapter } from '../helpers/toy-adapter.js';

/**
 * A sixth wire format is one adapter, its fixtures and one registry line. Here the adapter is
 * wired without the registry (startServer's `adapters`) and nothing else changes: the endpoints,
 * the list filters, the configuration, the policy's `format` matcher and GET /v1/formats (the
 * page's lists) take it. test/web/toy-format.slow.test.ts shows the page's filters.
 */

const WITH_TOY = [...adapters, toyAdapter];

describe('a wire format the registry does not know, wired in', () => {
  let t: TestServer;
  afterEach(async () => t?.close());

  const submit = (frame: unknown, api = t.api) => api.post(`/v1/formats/${TOY_FORMAT}/requests`, frame);

  it('takes frames, lists them under its name and answers in its own reply', async () => {
    t = await startTestServer({}, { adapters: WITH_TOY });
    const res = await submit({ question: 'Ship the toy?', id: 'q-1' });
    expect(res.status, res.text).toBe(201);
    const record = res.body.request;
    expect(record).toMatchObject({ title: 'Ship the toy?', kind: 'review', dedupe_key: 'toy:q-1', status: 'pending' });
    expect(res.body.reply).toBeNull();
    // The same frame again is the same request.
    expect((await submit({ question: 'Ship the toy?', id: 'q-1' })).body.request.id).toBe(record.id);

    const listed = await t.api.get(`/v1/requests?format=${TOY_FORMAT}`);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.map((r: { id: string }) => r.id)).toEqual([record.id]);
    expect((await t.api.get('/v1/requests?format=handup')).body).toEqual([]);

    expect((await decide(t.api, record, 'approve')).status).toBe(200);
    const reply = await t.api.get(`/v1/formats/${TOY_FORMAT}/requests/${record.id}/reply`);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.reply).toEqual({ id: 'q-1', answer: 'approve' });
    expect((await t.sql<{ format: string }>('SELECT format FROM requests WHERE id = ?', [record.id]))[0]?.format).toBe(TOY_FORMAT);
  });

  it('GET /v1/formats names the formats and kinds served: the filters take exactly those', async () => {
    t = await startTestServer({}, { adapters: WITH_TOY });
    const res = await t.api.get('/v1/formats');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      formats: ['handup', 'ask', 'paperclip', 'roll', 'alp', 'claude-code', TOY_FORMAT, 'mcp'],
      native: ['ask', 'paperclip', 'roll', 'alp', 'claude-code', TOY_FORMAT],
      kinds: ['command', 'edit', 'review', 'question', 'info', 'custom'],
    });
    expect((await t.api.get('/v1/formats', { token: null })).status).toBe(401);
    await t.close();

    // A daemon without the adapter knows no such format: its filter refuses the name.
    t = await startTestServer();
    expect((await t.api.get('/v1/formats')).body.formats).not.toContain(TOY_FORMAT);
    expectError(await t.api.get(`/v1/requests?format=${TOY_FORMAT}`), 400, 'invalid_request', 'format');
    expectError(await submit({ question: 'Ship the toy?', id: 'q-1' }), 404, 'unknown_format', TOY_FORMAT);
  });

  it("the adapter's own default timeout is a config key with its env variable", async () => {
    const config = loadConfig({ env: {}, adapters: WITH_TOY });
    expect(config.formats[TOY_FORMAT]).toEqual({ default_timeout: TOY_DEFAULT_TIMEOUT });
    expect(loadConfig({ env: { COUNTERSIGN_FORMATS_TOY_DEFAULT_TIMEOUT: '2h' }, adapters: WITH_TOY }).formats[TOY_FORMAT]).toEqual({ default_timeout: '2h' });
    // Without the adapter the key and the variable mean nothing, and say so.
    expect(() => loadConfig({ env: { COUNTERSIGN_FORMATS_TOY_DEFAULT_TIMEOUT: '2h' } })).toThrow(
      /COUNTERSIGN_FORMATS_TOY_DEFAULT_TIMEOUT: unknown environment variable/,
    );
    expect(() => loadConfig({ env: {}, overrides: { formats: { [TOY_FORMAT]: { default_timeout: '2h' } } } })).toThrow(ConfigError);

    t = await startTestServer({}, { adapters: WITH_TOY });
    const first = (await submit({ question: 'Ship the toy?', id: 'q-1' })).body.request;
    expect(first.timeout).toBe(TOY_DEFAULT_TIMEOUT);
    expect(first.expires_at).toBe(first.created_at + durationMs(TOY_DEFAULT_TIMEOUT));
    await t.close();

    t = await startTestServer({ formats: { [TOY_FORMAT]: { default_timeout: 'none' } } }, { adapters: WITH_TOY });
    const second = (await submit({ question: 'Ship the toy?', id: 'q-1' })).body.request;
    expect(second).toMatchObject({ timeout: null, expires_at: null });
  });

  it("the policy's format matcher takes its name, in the config file and over the API", async () => {
    const rules = [{ id: 'toys-are-fine', match: { format: TOY_FORMAT }, action: 'approve' }];
    // Unknown to a daemon without the adapter: a config error naming the key.
    expect(() => loadConfig({ env: {}, overrides: { rules } as never })).toThrow(/rules\.0\.match\.format/);

    t = await startTestServer({ rules } as never, { adapters: WITH_TOY });
    const res = await submit({ question: 'Ship the toy?', id: 'q-1' });
    expect(res.status, res.text).toBe(201);
    expect(res.body.request).toMatchObject({ status: 'approved', decision: { option: 'approve', decided_by: 'rule', rule_id: 'toys-are-fine' } });
    expect(res.body.reply).toEqual({ id: 'q-1', answer: 'approve' });
    // A handup request is not of the toy format: the rule leaves it to a person.
    const handup = await t.api.post('/v1/requests', { title: 'Not a toy' });
    expect((await show(t.api, handup.body.id)).status).toBe('pending');

    const stored = await t.api.post('/v1/rules', { id: 'toy-denied', match: { format: [TOY_FORMAT, 'mcp'], title: '^Burn' }, action: 'deny' });
    expect(stored.status, stored.text).toBe(201);
    expectError(await t.api.post('/v1/rules', { id: 'nope', match: { format: 'toys' }, action: 'deny' }), 400, 'invalid_rule', 'match.format');
    const tried = await t.api.post('/v1/rules/test', { format: TOY_FORMAT, frame: { question: 'Burn the toy?', id: 'q-2' } });
    expect(tried.status, tried.text).toBe(200);
    expect(tried.body).toMatchObject({ rule: { id: 'toys-are-fine' }, action: 'approve' });
  });
});

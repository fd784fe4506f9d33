import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createRequest, expectError } from '../helpers/request-api.js';
import { createFakeClock } from '../helpers/fake-clock.js';
import { startTestServer, TEST_STORE, type TestServer } from '../helpers/test-server.js';
import { connectWs } from '../helpers/ws-client.js';

/** Auto mode against the real daemon. */

let t: TestServer | undefined;
let other: TestServer | undefined;
afterEach(async () => {
  await other?.close();
  await t?.close();
  t = other = undefined;
});

const put = (body: unknown) => t!.api.request('PUT', '/v1/auto', body);

describe('auto mode', () => {
  it('starts off; low approves new low and medium risk requests, not high; all approves every risk; decided_by auto', async () => {
    t = await startTestServer();
    expect((await t.api.get('/v1/auto')).body).toEqual({ mode: 'off', until: null, set_at: null, set_by: null });
    const pendingBefore = await createRequest(t.api, { title: 'Before', risk: 'low' });
    const set = await put({ mode: 'low' });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toMatchObject({ mode: 'low', until: null, set_by: 'admin' });

    const low = await createRequest(t.api, { title: 'Low', risk: 'low' });
    const medium = await createRequest(t.api, { title: 'Medium', risk: 'medium' });
    const high = await createRequest(t.api, { title: 'High', risk: 'high' });
    expect([low.status, medium.status, high.status]).toEqual(['approved', 'approved', 'pending']);
    expect(low.decision).toMatchObject({ option: 'approve', decided_by: 'auto', content_hash: low.content_hash });
    expect(low.decision.rule_id).toBeUndefined();
    const rows = (await t.api.get(`/v1/requests/${low.id}/audit`)).body;
    expect(rows.map((r: any) => [r.event, r.actor])).toEqual([
      ['created', 'admin'],
      ['decided', 'auto'],
    ]);
    expect(rows[1].details).toMatchObject({ mode: 'low', option: 'approve' });
    // Requests already pending are left alone.
    expect((await t.api.get(`/v1/requests/${pendingBefore.id}`)).body.status).toBe('pending');

    await put({ mode: 'all' });
    expect((await createRequest(t.api, { title: 'High again', risk: 'high' })).status).toBe('approved');
    await put({ mode: 'off' });
    expect((await createRequest(t.api, { title: 'Low again', risk: 'low' })).status).toBe('pending');
    expect((await t.api.get('/v1/history?outcome=auto')).body.items).toHaveLength(3);
  });

  it.each([
    ['a question', { kind: 'question', input: { questions: [{ id: 'q', question: 'Which?', options: [{ label: 'A' }] }] } }],
    ['an info notice', { kind: 'info' }],
    ['a form (input.fields)', { input: { fields: [{ name: 'x', type: 'boolean' }] } }],
    ['free text (input.allow_free_text)', { input: { allow_free_text: true } }],
    ['a deny that needs feedback', { input: { feedback: 'required_on_deny' } }],
    [
      'two approve options',
      {
        options: [
          { id: 'a', label: 'A', outcome: 'approve' },
          { id: 'b', label: 'B', outcome: 'approve' },
        ],
      },
    ],
    ['no approve option', { options: [{ id: 'n', label: 'No', outcome: 'deny' }] }],
  ])('never approves %s', async (_name, body) => {
    t ??= await startTestServer();
    await put({ mode: 'all' });
    expect((await createRequest(t.api, { title: 'Careful', ...body })).status).toBe('pending');
  });

  it('rules run first: any matching rule wins, ask and deny included', async () => {
    t = await startTestServer({
      rules: [
        { id: 'keep-deploys', match: { title: '^Deploy' }, action: 'ask' },
        { id: 'no-rm', match: { title: '^Remove' }, action: 'deny' },
      ] as never,
    });
    await put({ mode: 'all' });
    expect((await createRequest(t.api, { title: 'Deploy prod' })).status).toBe('pending');
    expect((await createRequest(t.api, { title: 'Remove the branch' })).decision).toMatchObject({ decided_by: 'rule', rule_id: 'no-rm' });
    expect((await createRequest(t.api, { title: 'Anything else' })).decision.decided_by).toBe('auto');
  });

  it('for: turns itself off when the time runs out, with an auto.changed event and an audit entry', async () => {
    const clock = createFakeClock(Date.UTC(2026, 0, 1));
    t = await startTestServer({}, { clock });
    const ws = await connectWs(`${t.wsUrl}/v1/events`, t.adminToken);
    const set = await put({ mode: 'low', for: '1h' });
    expect(set.body).toMatchObject({ mode: 'low', until: clock.now() + 3_600_000 });
    expect(await ws.next()).toEqual({ type: 'auto.changed', auto: set.body });
    expect((await createRequest(t.api, { title: 'During' })).status).toBe('approved');
    const until = clock.now() + 3_600_000;
    clock.advance(3_600_000);
    // Switched off when it ran out, by `timeout`: not the admin's switch any more.
    const off = { mode: 'off', until: null, set_at: until, set_by: 'timeout' };
    expect(await ws.nextMatching((m) => m.type === 'auto.changed')).toEqual({ type: 'auto.changed', auto: off });
    ws.socket.close();
    expect((await t.api.get('/v1/auto')).body).toEqual(off);
    expect((await createRequest(t.api, { title: 'After' })).status).toBe('pending');
    const log = (await t.api.get('/v1/policy/audit')).body;
    expect(log.map((e: any) => [e.event, e.actor, e.details.mode])).toEqual([
      ['auto.changed', 'timeout', 'off'],
      ['auto.changed', 'admin', 'low'],
    ]);
  });

  it('is runtime only: a restart turns it off', async () => {
    t = await startTestServer();
    await put({ mode: 'all' });
    const dataDir = t.dataDir;
    await t.server.close();
    other = await startTestServer({ data_dir: dataDir });
    expect((await other.api.get('/v1/auto')).body).toMatchObject({ mode: 'off', set_by: 'countersign' });
    expect((await createRequest(other.api, { title: 'After restart' })).status).toBe('pending');
  });

  it('a daemon that fails to start (its port taken) leaves it as it is', async () => {
    t = await startTestServer();
    await put({ mode: 'all' });
    const dataDir = t.dataDir;
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      // On SQLite the file takes one daemon: the failed start comes after this one stopped.
      if (TEST_STORE === 'sqlite') await t.server.close();
      await expect(startTestServer({ data_dir: dataDir, port: (taken.address() as AddressInfo).port })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    if (TEST_STORE === 'sqlite') {
      const db = new Database(join(dataDir, 'countersign.db'), { readonly: true });
      try {
        expect(db.prepare('SELECT auto_mode, auto_set_by FROM policy_state').get()).toEqual({ auto_mode: 'all', auto_set_by: 'admin' });
      } finally {
        db.close();
      }
    } else {
      expect((await t.api.get('/v1/auto')).body).toMatchObject({ mode: 'all', set_by: 'admin' });
    }
  });

  it('refuses bad input (400 naming the field) and submit tokens (403), changing nothing', async () => {
    t = await startTestServer();
    expectError(await put({ mode: 'yolo' }), 400, 'invalid_request', 'mode');
    expectError(await put({ mode: 'low', for: '10 minutes' }), 400, 'invalid_request', 'for');
    expectError(await put({ mode: 'off', for: '1h' }), 400, 'invalid_request', 'for');
    expectError(await put({ mode: 'low', extra: 1 }), 400, 'invalid_request', 'extra');
    const { api } = await t.submitClient('agent');
    expectError(await api.request('PUT', '/v1/auto', { mode: 'all' }), 403, 'forbidden');
    expect((await t.api.get('/v1/auto')).body.mode).toBe('off');
    expect(await t.count('policy_audit')).toBe(0);
  });
});

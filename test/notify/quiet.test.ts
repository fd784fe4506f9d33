import { afterEach, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../callbacks/callback-kit.js';
import { createFakeClock, type FakeClock } from '../helpers/fake-clock.js';
import { createRequest, expectError, show } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectWs } from '../helpers/ws-client.js';
import { COMMAND, hookDeliveries, settledAll, waitForHookDeliveries, withHooks } from './notify-kit.js';

/** Bursts and mutes, with an injected clock and real loopback receivers. */
describe('quiet: bursts and mutes', () => {
  let t: TestServer | undefined;
  let receiver: Receiver | undefined;
  let clock: FakeClock;
  const extra: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of extra.splice(0)) await c();
    await t?.close();
    await receiver?.close();
    t = receiver = undefined;
  });

  async function setup(notifications: Record<string, unknown> = {}) {
    clock = createFakeClock(Math.floor(Date.now() / 1000) * 1000);
    receiver = await startReceiver();
    t = await startTestServer(
      withHooks(
        [
          { name: 'sink', webhook: `${receiver.url}/sink`, format: 'json' },
          { name: 'chat', webhook: `${receiver.url}/chat`, format: 'slack' },
        ],
        { notifications: notifications as never },
      ),
      { clock, callbacks: { random: () => 0.5 } },
    );
    return t;
  }

  const bodies = (path: string) => receiver!.received.filter((r) => r.path === path).map((r) => JSON.parse(r.body));
  const from = (agent: string, session: string, n: number) => ({ ...COMMAND, title: `${agent} request ${n}`, source: { agent, session } });

  it('a burst sends at most max per source and hook in the window, then one summary when the window closes', async () => {
    await setup({ burst: { window: '1m', max: 3 } });
    const created = [];
    for (let i = 1; i <= 5; i++) created.push(await createRequest(t!.api, from('codex', 's-1', i)));
    // Another source has its own window.
    const other = await createRequest(t!.api, from('claude', 's-9', 1));
    await waitForHookDeliveries(t!.api, 'sink', (d) => d.length === 4 && settledAll(d));
    // Settled before the clock moves: an attempt in flight would otherwise see its deadline pass.
    await waitForHookDeliveries(t!.api, 'chat', (d) => d.length === 4 && settledAll(d));
    expect(bodies('/sink').map((b) => b.data.request.title)).toEqual(['codex request 1', 'codex request 2', 'codex request 3', 'claude request 1']);

    clock.advance(59_999);
    await t!.server.settled();
    expect(await hookDeliveries(t!.api, 'sink')).toHaveLength(4);
    clock.advance(1);
    await t!.server.settled();
    const sink = await waitForHookDeliveries(t!.api, 'sink', (d) => d.length === 5 && settledAll(d));
    expect(sink[0]).toMatchObject({ type: 'notifications.summary', request_id: created[4].id });
    const summary = bodies('/sink').at(-1);
    expect(summary).toMatchObject({
      v: 1,
      type: 'notifications.summary',
      data: { source: { agent: 'codex', session: 's-1' }, count: 2, latest: { id: created[4].id, title: 'codex request 5', status: 'pending' } },
    });
    // Presets say it in words; the summary goes out whatever the hook's events filter.
    await waitForHookDeliveries(t!.api, 'chat', (d) => d.length === 5 && settledAll(d));
    expect(bodies('/chat').at(-1).text).toContain('2 more from codex: codex request 5');

    // The next notification after the closed window opens a new one and is sent.
    await createRequest(t!.api, from('codex', 's-1', 6));
    await waitForHookDeliveries(t!.api, 'sink', (d) => d.length === 6 && settledAll(d));
    expect(bodies('/sink').at(-1).data.request.title).toBe('codex request 6');
    expect(other.id).toBeTruthy();
  });

  it("on ntfy, the summary of held notifications about a request still waiting gets its risk's priority", async () => {
    clock = createFakeClock(Math.floor(Date.now() / 1000) * 1000);
    receiver = await startReceiver();
    t = await startTestServer(
      withHooks([{ name: 'phone', webhook: `${receiver.url}/topic`, format: 'ntfy' }], { notifications: { burst: { window: '1m', max: 1 } } as never }),
      { clock, callbacks: { random: () => 0.5 } },
    );
    for (let i = 1; i <= 3; i++) await createRequest(t.api, from('codex', 's-1', i));
    await waitForHookDeliveries(t.api, 'phone', (d) => d.length === 1 && settledAll(d));
    clock.advance(60_000);
    await t.server.settled();
    await waitForHookDeliveries(t.api, 'phone', (d) => d.length === 2 && settledAll(d));
    const [first, summary] = bodies('/');
    expect(summary).toMatchObject({ title: '2 more from codex', priority: first.priority, tags: ['warning'] });
    expect(first.priority).toBe(4);
  });

  it('max 0 disables the burst limit', async () => {
    await setup({ burst: { window: '1m', max: 0 } });
    for (let i = 1; i <= 25; i++) await createRequest(t!.api, from('codex', 's-1', i));
    await waitForHookDeliveries(t!.api, 'sink', (d) => d.length === 25 && settledAll(d));
  });

  it('mutes: stored, listed, removable; a muted source sends nothing; mutes.changed reaches /v1/events', async () => {
    await setup();
    const ws = await connectWs(`${t!.wsUrl}/v1/events`, t!.adminToken);
    extra.push(async () => ws.socket.close());
    const res = await t!.api.post('/v1/mutes', { agent: 'codex' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/),
      agent: 'codex',
      session: null,
      dismiss_notices: false,
      created_at: clock.now(),
      expires_at: null,
    });
    expect(await ws.nextMatching((m: any) => m.type === 'mutes.changed')).toEqual({ type: 'mutes.changed' });
    expect((await t!.api.get('/v1/mutes')).body).toEqual([res.body]);

    await createRequest(t!.api, from('codex', 's-1', 1));
    const heard = await createRequest(t!.api, from('claude', 's-1', 1));
    await waitForHookDeliveries(t!.api, 'sink', (d) => d.length === 1 && settledAll(d));
    expect(bodies('/sink').map((b) => b.data.request.id)).toEqual([heard.id]);

    const del = await t!.api.delete(`/v1/mutes/${res.body.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual(res.body);
    expect(await ws.nextMatching((m: any) => m.type === 'mutes.changed')).toEqual({ type: 'mutes.changed' });
    expect((await t!.api.get('/v1/mutes')).body).toEqual([]);
    expectError(await t!.api.delete(`/v1/mutes/${res.body.id}`), 404, 'not_found');
    await createRequest(t!.api, from('codex', 's-1', 2));
    await waitForHookDeliveries(t!.api, 'sink', (d) => d.length === 2 && settledAll(d));
  });

  it('a session mute covers that session only; `for` makes a mute expire', async () => {
    await setup();
    const mute = (await t!.api.post('/v1/mutes', { agent: 'codex', session: 's-1', for: '1h' })).body;
    expect(mute.expires_at).toBe(clock.now() + 3_600_000);
    await createRequest(t!.api, from('codex', 's-1', 1));
    await createRequest(t!.api, from('codex', 's-2', 1));
    await waitForHookDeliveries(t!.api, 'sink', (d) => d.length === 1 && settledAll(d));
    await waitForHookDeliveries(t!.api, 'chat', (d) => d.length === 1 && settledAll(d));
    expect(bodies('/sink')[0].data.request.source.session).toBe('s-2');
    clock.advance(3_600_000);
    expect((await t!.api.get('/v1/mutes')).body).toEqual([]);
    await createRequest(t!.api, from('codex', 's-1', 2));
    await waitForHookDeliveries(t!.api, 'sink', (d) => d.length === 2 && settledAll(d));
  });

  it('dismiss_notices dismisses a muted source\'s info notices on arrival (decided_by "mute"); other kinds wait, unnotified', async () => {
    await setup();
    await t!.api.post('/v1/mutes', { agent: 'my-hook', dismiss_notices: true });
    const notice = await createRequest(t!.api, { title: 'Build finished', kind: 'info', source: { agent: 'my-hook' } });
    expect(notice.status).toBe('dismissed');
    expect(notice.decision).toMatchObject({ option: 'dismiss', outcome: 'deny', decided_by: 'mute' });
    const audit = (await t!.api.get(`/v1/requests/${notice.id}/audit`)).body;
    expect(audit.map((a: any) => [a.event, a.actor])).toEqual([
      ['created', 'admin'],
      ['decided', 'mute'],
    ]);
    const command = await createRequest(t!.api, { ...COMMAND, source: { agent: 'my-hook' } });
    expect(command.status).toBe('pending');
    expect((await show(t!.api, notice.id)).status).toBe('dismissed');
    // Nothing was sent for either (muted), and no decided event for the dismissed notice.
    await createRequest(t!.api, from('claude', 's', 1));
    await waitForHookDeliveries(t!.api, 'sink', (d) => d.length === 1 && settledAll(d));
    expect(bodies('/sink')).toHaveLength(1);
  });

  it('mutes survive a restart', async () => {
    await setup();
    const mute = (await t!.api.post('/v1/mutes', { session: 'noisy' })).body;
    await t!.server.close();
    const again = await startTestServer({ ...withHooks([]), data_dir: t!.dataDir });
    extra.push(() => again.close());
    expect((await again.api.get('/v1/mutes')).body).toEqual([mute]);
  });

  it('bad mute input is a 400 naming the field, and nothing is stored', async () => {
    await setup();
    expectError(await t!.api.post('/v1/mutes', { agent: 'x', for: 'forever' }), 400, 'invalid_request', 'for');
    expectError(await t!.api.post('/v1/mutes', { agent: 'x', until: 5 }), 400, 'invalid_request', 'until');
    expectError(await t!.api.post('/v1/mutes', { agent: '' }), 400, 'invalid_request', 'agent');
    expectError(await t!.api.post('/v1/mutes', { dismiss_notices: 'yes' }), 400, 'invalid_request', 'dismiss_notices');
    expect(await t!.count('mutes')).toBe(0);
    const { api: submit } = await t!.submitClient('agent');
    expectError(await submit.post('/v1/mutes', { agent: 'x' }), 403, 'forbidden');
    expect(await t!.count('mutes')).toBe(0);
    expectError(await t!.api.post('/v1/mutes', [1]), 400, 'invalid_request');
    expect(await t!.count('mutes')).toBe(0);
  });

  it('every field of a mute is optional, so a POST without a body mutes every source', async () => {
    await setup();
    const res = await t!.api.request('POST', '/v1/mutes', undefined);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ agent: null, session: null, dismiss_notices: false, expires_at: null });
  });
});

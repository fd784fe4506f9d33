import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../callbacks/callback-kit.js';
import { createFakeClock, type FakeClock } from '../helpers/fake-clock.js';
import { createRequest, decide } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectWs } from '../helpers/ws-client.js';
import { COMMAND, hookDeliveries, settledAll, waitForHookDeliveries, withHooks } from './notify-kit.js';

/** Reminders and expiring notices on an injected clock: each at its time, once. */
describe('request.reminder and request.expiring', () => {
  let t: TestServer | undefined;
  let receiver: Receiver | undefined;
  let clock: FakeClock;
  const extra: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of extra.splice(0)) await c();
    await t?.close();
    await receiver?.close();
    t = receiver = undefined;
  });

  const EVENTS = ['request.reminder', 'request.expiring', 'request.expired'] as const;
  const config = (notifications: Record<string, unknown> = { remind_every: '10m', expiring_before: '5m' }) =>
    withHooks(
      [
        { name: 'sink', webhook: `${receiver!.url}/sink`, format: 'json', events: [...EVENTS] },
        { name: 'chat', webhook: `${receiver!.url}/chat`, format: 'slack', events: ['request.expiring'] },
      ],
      { notifications: { burst: { window: '1m', max: 0 }, ...notifications } as never },
    );

  async function setup(notifications?: Record<string, unknown>) {
    clock = createFakeClock(Math.floor(Date.now() / 1000) * 1000);
    receiver = await startReceiver();
    t = await startTestServer(config(notifications), { clock });
  }

  const sinkTypes = () => receiver!.received.filter((r) => r.path === '/sink').map((r) => JSON.parse(r.body).type);
  async function advanceTo(at: number) {
    clock.set(at);
    await t!.server.settled();
  }
  const sinkCount = async (n: number) => waitForHookDeliveries(t!.api, 'sink', (d) => d.length === n && settledAll(d));

  /** Stops the daemon and starts another on its data with these notification settings, its clock at `at`. */
  async function restart(notifications: Record<string, unknown> | undefined, at: number) {
    await t!.server.close();
    const dataDir = t!.dataDir;
    const later = createFakeClock(at);
    const again = await startTestServer({ ...config(notifications), data_dir: dataDir }, { clock: later });
    extra.push(async () => {
      await again.close();
      rmSync(dataDir, { recursive: true, force: true });
    });
    return { again, later };
  }

  it('reminds every remind_every while pending, warns expiring_before the deadline, each at its time', async () => {
    await setup();
    const ws = await connectWs(`${t!.wsUrl}/v1/events`, t!.adminToken);
    extra.push(() => ws.socket.close());
    const r = await createRequest(t!.api, { ...COMMAND, timeout: '30m' });
    const at = (min: number) => r.created_at + min * 60_000;

    await advanceTo(at(10) - 1);
    expect(await hookDeliveries(t!.api, 'sink')).toEqual([]);
    await advanceTo(at(10));
    await sinkCount(1);
    const reminder = JSON.parse(receiver!.received[0]!.body);
    expect(reminder).toMatchObject({
      v: 1,
      type: 'request.reminder',
      time: new Date(at(10)).toISOString(),
      data: { request: { id: r.id, status: 'pending' } },
    });
    expect(await ws.nextMatching((m: any) => m.type === 'request.reminder')).toMatchObject({ type: 'request.reminder', request: { id: r.id } });

    await advanceTo(at(20));
    await sinkCount(2);
    await advanceTo(at(25) - 1);
    expect(await hookDeliveries(t!.api, 'sink')).toHaveLength(2);
    await advanceTo(at(25));
    await sinkCount(3);
    await waitForHookDeliveries(t!.api, 'chat', (d) => d.length === 1 && settledAll(d));
    const chat = JSON.parse(receiver!.received.find((x) => x.path === '/chat')!.body);
    expect(chat.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Expires in 5m', emoji: false } });
    expect(await ws.nextMatching((m: any) => m.type === 'request.expiring')).toMatchObject({ request: { id: r.id } });

    // No reminder at the deadline itself: the request expires instead.
    await advanceTo(at(30));
    await sinkCount(4);
    await advanceTo(at(60));
    expect(await hookDeliveries(t!.api, 'sink')).toHaveLength(4);
    expect(sinkTypes()).toEqual(['request.reminder', 'request.reminder', 'request.expiring', 'request.expired']);
  });

  it('no expiring notice without a deadline or for a life shorter than expiring_before; none after a decision', async () => {
    await setup();
    const open = await createRequest(t!.api, COMMAND);
    const short = await createRequest(t!.api, { ...COMMAND, title: 'short', timeout: '3m' });
    const decided = await createRequest(t!.api, { ...COMMAND, title: 'decided', timeout: '1h' });
    expect((await decide(t!.api, decided, 'approve')).status).toBe(200);
    await advanceTo(open.created_at + 9 * 60_000);
    // Only the short request's expiry so far; no expiring notice for it.
    await sinkCount(1);
    expect(sinkTypes()).toEqual(['request.expired']);
    await advanceTo(open.created_at + 10 * 60_000);
    await sinkCount(2);
    const bodies = receiver!.received.filter((x) => x.path === '/sink').map((x) => JSON.parse(x.body));
    expect(bodies[1]).toMatchObject({ type: 'request.reminder', data: { request: { id: open.id } } });
    expect(bodies.map((b) => b.data.request.id)).not.toContain(decided.id);
    expect(short.id).toBeTruthy();
  });

  it('a muted source gets no reminder or expiring notice, from hooks or on /v1/events', async () => {
    await setup();
    await t!.api.post('/v1/mutes', { agent: 'codex' });
    const ws = await connectWs(`${t!.wsUrl}/v1/events`, t!.adminToken);
    extra.push(() => ws.socket.terminate());
    const r = await createRequest(t!.api, { ...COMMAND, timeout: '30m' });
    await advanceTo(r.created_at + 29 * 60_000);
    await createRequest(t!.api, { ...COMMAND, source: { agent: 'other' }, timeout: '1m' });
    await advanceTo(r.created_at + 30 * 60_000);
    // Only the other agent's expiry.
    await sinkCount(1);
    expect(sinkTypes()).toEqual(['request.expired']);
    await ws.nextMatching((m) => m.type === 'request.expired' && m.request.id === r.id);
    const notices = ws.messages.filter((m: any) => m.type === 'request.reminder' || m.type === 'request.expiring');
    expect(notices).toEqual([]);
  });

  it('reminders turned off by a restart stop; none goes out for requests scheduled before', async () => {
    await setup();
    const r = await createRequest(t!.api, COMMAND);
    const { again, later } = await restart({ remind_every: 'none', expiring_before: '5m' }, r.created_at + 35 * 60_000);
    await again.server.settled();
    later.set(r.created_at + 60 * 60_000);
    await again.server.settled();
    expect(await hookDeliveries(again.api, 'sink')).toEqual([]);
    expect(await again.count('request_notices')).toBe(0);
  });

  it('expiring notices turned off by a restart are not sent, to hooks or on /v1/events', async () => {
    await setup({ remind_every: 'none', expiring_before: '5m' });
    const r = await createRequest(t!.api, { ...COMMAND, timeout: '30m' });
    expect(await t!.count('request_notices')).toBe(1);
    const { again, later } = await restart({ remind_every: 'none', expiring_before: 'none' }, r.created_at + 10 * 60_000);
    const ws = await connectWs(`${again.wsUrl}/v1/events`, again.adminToken);
    extra.push(() => ws.socket.terminate());
    later.set(r.created_at + 25 * 60_000);
    await again.server.settled();
    expect(await again.count('request_notices')).toBe(0);
    later.set(r.created_at + 30 * 60_000);
    await again.server.settled();
    await ws.nextMatching((m) => m.type === 'request.expired' && m.request.id === r.id);
    expect(ws.messages.filter((m: any) => m.type === 'request.expiring')).toEqual([]);
    await waitForHookDeliveries(again.api, 'sink', (d) => d.length === 1 && settledAll(d));
    expect(receiver!.received.filter((x) => x.path !== '/sink' || JSON.parse(x.body).type !== 'request.expired')).toEqual([]);
  });

  it('reminders turned on by a restart cover requests already pending, from their next period, before their deadline', async () => {
    await setup({ remind_every: 'none', expiring_before: 'none' });
    const open = await createRequest(t!.api, COMMAND);
    const soon = await createRequest(t!.api, { ...COMMAND, title: 'soon', timeout: '40m' });
    const decided = await createRequest(t!.api, { ...COMMAND, title: 'decided' });
    expect((await decide(t!.api, decided, 'approve')).status).toBe(200);
    expect(await t!.count('request_notices')).toBe(0);
    // 35 minutes in: the next ten-minute period of each begins at 40 (the deadline of `soon`).
    const { again, later } = await restart({ remind_every: '10m', expiring_before: 'none' }, open.created_at + 35 * 60_000);
    await again.server.settled();
    expect(await again.sql('SELECT request_id, remind_at FROM request_notices')).toEqual([{ request_id: open.id, remind_at: open.created_at + 40 * 60_000 }]);
    later.set(open.created_at + 40 * 60_000);
    await again.server.settled();
    await waitForHookDeliveries(again.api, 'sink', (d) => d.length === 2 && settledAll(d));
    const bodies = receiver!.received.filter((x) => x.path === '/sink').map((x) => JSON.parse(x.body));
    expect(bodies.map((b) => [b.type, b.data.request.id]).sort()).toEqual(
      [
        ['request.expired', soon.id],
        ['request.reminder', open.id],
      ].sort(),
    );
  });

  it('off by default: remind_every "none" sends no reminders', async () => {
    await setup({ remind_every: 'none', expiring_before: 'none' });
    const r = await createRequest(t!.api, { ...COMMAND, timeout: '2h' });
    await advanceTo(r.created_at + 119 * 60_000);
    expect(await hookDeliveries(t!.api, 'sink')).toEqual([]);
    expect(await t!.count('request_notices')).toBe(0);
  });

  it('without public_url, a reminder sent at start (before the daemon listens) links to the address the later ones use', async () => {
    await setup();
    const r = await createRequest(t!.api, COMMAND);
    await t!.server.close();
    // A fixed port on the wildcard address, as in a container (COUNTERSIGN_HOST=0.0.0.0).
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const later = createFakeClock(r.created_at + 15 * 60_000);
    const again = await startTestServer({ ...config(), data_dir: t!.dataDir, host: '0.0.0.0', port }, { clock: later });
    extra.push(async () => {
      await again.close();
      rmSync(t!.dataDir, { recursive: true, force: true });
    });
    await again.server.settled();
    await waitForHookDeliveries(again.api, 'sink', (d) => d.length === 1 && settledAll(d));
    later.set(r.created_at + 20 * 60_000);
    await again.server.settled();
    await waitForHookDeliveries(again.api, 'sink', (d) => d.length === 2 && settledAll(d));
    const urls = receiver!.received.filter((x) => x.path === '/sink').map((x) => JSON.parse(x.body).data.request.url);
    expect(urls).toEqual([`http://127.0.0.1:${port}/#/requests/${r.id}`, `http://127.0.0.1:${port}/#/requests/${r.id}`]);
  });

  it('a reminder that came due while the daemon was down is sent once at the next start', async () => {
    await setup();
    const r = await createRequest(t!.api, COMMAND);
    // 35 minutes later: three reminder times were missed; one reminder goes out.
    const { again, later } = await restart(undefined, r.created_at + 35 * 60_000);
    await again.server.settled();
    await waitForHookDeliveries(again.api, 'sink', (d) => d.length === 1 && settledAll(d));
    expect(JSON.parse(receiver!.received[0]!.body)).toMatchObject({ type: 'request.reminder', data: { request: { id: r.id } } });
    // The next one is on the original rhythm: 40 minutes after creation.
    later.set(r.created_at + 40 * 60_000 - 1);
    await again.server.settled();
    expect(await hookDeliveries(again.api, 'sink')).toHaveLength(1);
    later.set(r.created_at + 40 * 60_000);
    await again.server.settled();
    await waitForHookDeliveries(again.api, 'sink', (d) => d.length === 2 && settledAll(d));
  });
});

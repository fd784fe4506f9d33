import { afterEach, describe, expect, it } from 'vitest';
import { createRequest } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { COMMAND, hookDeliveries, settledAll, waitForHookDeliveries, withHooks, type HookInput } from '../notify/notify-kit.js';
import { SECRET, createWithCallback, decideRequest, startReceiver, waitForDeliveries, type Receiver } from './callback-kit.js';

/**
 * One daemon, one delivery worker, one outbox for callbacks and every hook's messages: a hook
 * whose receiver hangs must not hold up callbacks or other hooks' messages (docs/callbacks.md).
 * The hanging receiver holds every request until the test lets go; its hooks' timeout is an hour,
 * so nothing here is freed by a timeout.
 */
describe('a hanging hook receiver', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function receiver(answer?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
    const r = await startReceiver(answer);
    cleanups.push(() => r.close());
    return r;
  }

  /** A receiver that holds every request to a path starting with /hang while `holding.on`, and answers 200 otherwise. */
  async function hangingReceiver() {
    const holding = { on: true };
    const r = await receiver((_, req) => (holding.on && req.path.startsWith('/hang') ? 'hang' : { status: 200 }));
    const release = () => {
      holding.on = false;
      for (const res of r.held.splice(0)) res.writeHead(200).end();
    };
    // Held requests are answered before the daemon stops, so its shutdown has nothing to cut.
    cleanups.push(async () => release());
    return { r, release };
  }

  async function daemon(hooks: HookInput[]): Promise<TestServer> {
    const t = await startTestServer(withHooks(hooks, { callbacks: { allowlist: ['127.0.0.1'], secret: SECRET } }));
    cleanups.push(() => t.close());
    return t;
  }

  const ids = (r: Receiver, path?: string) =>
    r.received.filter((x) => path === undefined || x.path.startsWith(path)).map((x) => String(x.headers['webhook-id']));

  it('holds up neither callbacks nor another hook, and everything is delivered once when it lets go', async () => {
    const { r: hang, release } = await hangingReceiver();
    const fast = await receiver();
    const agent = await receiver();
    const t = await daemon([
      { name: 'hang', webhook: `${hang.url}/hang`, format: 'json', events: ['request.created'], timeout: '1h' },
      { name: 'fast', webhook: `${fast.url}/fast`, format: 'json', events: ['request.created'] },
    ]);

    // More of hang's messages due than the worker has slots for hooks, each held by its receiver.
    for (let i = 0; i < 6; i++) await createRequest(t.api, COMMAND);
    const withCallback = await createWithCallback(t.api, `${agent.url}/cb`);
    await decideRequest(t.api, withCallback, 'approve');

    // The callback and all seven of fast's messages arrive while hang's receiver still holds its requests.
    await agent.waitFor(1);
    await fast.waitFor(7);
    await hang.waitFor(2);
    expect(hang.held.length).toBe(2);
    expect(hang.received.length).toBe(2);
    const [callback] = await waitForDeliveries(t.api, withCallback.id, (d) => d[0]?.state === 'delivered');
    expect(callback.attempts).toMatchObject([{ n: 1, status: 200 }]);
    expect(JSON.parse(agent.received[0]!.body)).toMatchObject({ type: 'request.decided', data: { request: { id: withCallback.id } } });
    const fastRows = await waitForHookDeliveries(t.api, 'fast', (d) => d.length === 7 && settledAll(d));
    expect(fastRows.every((d) => d.state === 'delivered' && d.attempts.length === 1)).toBe(true);
    expect((await hookDeliveries(t.api, 'hang')).filter((d) => d.state === 'leased').length).toBe(2);

    release();
    const hangRows = await waitForHookDeliveries(t.api, 'hang', (d) => d.length === 7 && settledAll(d));
    expect(hangRows.every((d) => d.state === 'delivered' && d.attempts.length === 1)).toBe(true);

    // Exactly once each: every message arrived one time, with its delivery's id.
    expect(ids(hang).sort()).toEqual(hangRows.map((d) => d.id).sort());
    expect(ids(fast).sort()).toEqual(fastRows.map((d) => d.id).sort());
    expect(ids(agent)).toEqual([callback.id]);
  });

  it('holds up no other hook on the same host', async () => {
    const { r: host, release } = await hangingReceiver();
    const t = await daemon([
      { name: 'hang', webhook: `${host.url}/hang-1`, format: 'json', events: ['request.created'], timeout: '1h' },
      { name: 'hang-too', webhook: `${host.url}/hang-2`, format: 'json', events: ['request.created'], timeout: '1h' },
      { name: 'neighbour', webhook: `${host.url}/ok`, format: 'json', events: ['request.created'] },
    ]);
    for (let i = 0; i < 3; i++) await createRequest(t.api, COMMAND);

    // Four requests held on the host (two per hanging hook), and the neighbour's three still go through.
    await host.waitFor(7);
    expect(host.held.length).toBe(4);
    expect(ids(host, '/ok').length).toBe(3);
    await waitForHookDeliveries(t.api, 'neighbour', (d) => d.length === 3 && d.every((x) => x.state === 'delivered'));

    release();
    for (const hook of ['hang', 'hang-too']) {
      const rows = await waitForHookDeliveries(t.api, hook, (d) => d.length === 3 && settledAll(d));
      expect(rows.every((d) => d.state === 'delivered' && d.attempts.length === 1)).toBe(true);
    }
    expect(new Set(ids(host)).size).toBe(9);
    expect(host.received.length).toBe(9);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../callbacks/callback-kit.js';
import { createFakeClock } from '../helpers/fake-clock.js';
import { freshPostgresSchema, TEST_POSTGRES_URL, type FreshPostgres } from '../helpers/postgres.js';
import { createRequest, show } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { COMMAND, hookDeliveries, settledAll, waitForHookDeliveries, withHooks } from './notify-kit.js';

/**
 * Two daemons on one PostgreSQL database (docs/cluster.md): a reminder goes out once whichever
 * daemon's timer fires, a link made by one is used on the other once, and a mute made on one
 * silences the other. Skipped without a test PostgreSQL server.
 */
describe.skipIf(!TEST_POSTGRES_URL)('notifications across daemons (PostgreSQL)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function twoDaemons() {
    const db: FreshPostgres = await freshPostgresSchema();
    cleanups.push(() => db.drop());
    const receiver: Receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const start = Math.floor(Date.now() / 1000) * 1000;
    const clocks = [createFakeClock(start), createFakeClock(start)];
    const config = withHooks(
      [{ name: 'sink', webhook: `${receiver.url}/sink`, format: 'json', decision_links: true, events: ['request.created', 'request.reminder'] }],
      {
        public_url: 'https://approvals.example.com',
        storage: { url: db.url },
        notifications: { remind_every: '10m', expiring_before: 'none', burst: { window: '1m', max: 0 } } as never,
      },
    );
    const nodes: TestServer[] = [];
    for (const clock of clocks) {
      const node = await startTestServer(config, { clock });
      cleanups.push(() => node.close());
      nodes.push(node);
    }
    return { a: nodes[0]!, b: nodes[1]!, clocks, receiver };
  }

  it('a reminder goes out once whichever daemon fires; a link made on one is used once on the other', async () => {
    const { a, b, clocks, receiver } = await twoDaemons();
    const r = await createRequest(a.api, COMMAND);
    // Settled before the clocks move: an attempt in flight would otherwise see its deadline pass.
    await waitForHookDeliveries(a.api, 'sink', (d) => d.length === 1 && settledAll(d));
    for (const clock of clocks) clock.advance(10 * 60_000);
    await Promise.all([a.server.settled(), b.server.settled()]);
    await waitForHookDeliveries(b.api, 'sink', (d) => d.length === 2 && settledAll(d));
    // Both timers have fired and settled: still exactly one reminder.
    for (const clock of clocks) clock.advance(1);
    await Promise.all([a.server.settled(), b.server.settled()]);
    expect((await hookDeliveries(a.api, 'sink')).map((d) => d.type)).toEqual(['request.reminder', 'request.created']);

    const created = JSON.parse(receiver.received[0]!.body);
    const approve = new URL(created.data.links[0].url).pathname;
    const post = (node: TestServer) => fetch(node.url + approve, { method: 'POST', body: new URLSearchParams({}) });
    expect((await post(b)).status).toBe(200);
    expect((await post(a)).status).toBe(409);
    expect((await show(a.api, r.id)).decision).toMatchObject({ option: 'approve', decided_by: 'link:sink' });
  });

  it('a mute made on one daemon silences the other', async () => {
    const { a, b, receiver } = await twoDaemons();
    const mute = (await a.api.post('/v1/mutes', { agent: 'codex' })).body;
    expect((await b.api.get('/v1/mutes')).body).toEqual([mute]);
    await createRequest(b.api, COMMAND);
    const heard = await createRequest(b.api, { ...COMMAND, source: { agent: 'other' } });
    await receiver.waitFor(1);
    await waitForHookDeliveries(a.api, 'sink', (d) => d.length === 1 && settledAll(d));
    expect(JSON.parse(receiver.received[0]!.body).data.request.id).toBe(heard.id);
  });
});

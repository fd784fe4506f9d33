import { Writable } from 'node:stream';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.js';
import type { PolicyEvent } from '../../src/rules/policy-events.js';
import { pruneChanges } from '../../src/storage/postgres/postgres-store.js';
import type { Change } from '../../src/storage/store.js';
import { freshPostgresSchema, TEST_POSTGRES_URL, type FreshPostgres } from '../helpers/postgres.js';
import { createRequest, decide } from '../helpers/request-api.js';
import { createApiClient, startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectWs } from '../helpers/ws-client.js';

/**
 * A daemon that cannot read the change log for longer than its rows are kept (docs/cluster.md):
 * the rows it missed are pruned, so it hears `changes.lost` instead and resyncs. Its feed is cut
 * off here by a lock on the pruned mark, which every read of the log takes with the changes: the
 * daemons go on serving and writing, only the log cannot be read, as in a long partition from
 * PostgreSQL's point of view. The prune runs in the transaction holding the lock, so the feed's
 * next read comes after it, with no waiting on time.
 */
describe.skipIf(!TEST_POSTGRES_URL)('a daemon whose unread changes were pruned (PostgreSQL)', () => {
  let db: FreshPostgres | undefined;
  let a: TestServer | undefined;
  let b: TestServer | undefined;
  let cutOff: pg.Client | undefined;
  afterEach(async () => {
    await cutOff?.end().catch(() => {});
    for (const s of [b, a]) await s?.close();
    await db?.drop();
    a = b = db = cutOff = undefined;
  });

  it('hears changes.lost once, refreshes its policy, announces the decision to its reviewers and answers the long-poll waiting on it', async () => {
    db = await freshPostgresSchema();
    const lines: Array<{ level: number; msg: string; module?: string; announced?: number }> = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        for (const text of String(chunk).split('\n')) if (text) lines.push(JSON.parse(text));
        done();
      },
    });
    a = await startTestServer({ storage: { url: db.url } });
    b = await startTestServer({ storage: { url: db.url } }, { log: createLogger('info', stream) });
    const heardByB: Change[] = [];
    b.server.deps.store.onRemoteChange((c) => heardByB.push(c));
    const policyOnB: PolicyEvent[] = [];
    b.server.deps.policyEvents.on((e) => policyOnB.push(e));

    const agent = await a.submitClient('agent');
    const r = await createRequest(agent.api, { title: 'Waited on B' });
    const reviewer = await connectWs(`${b.wsUrl}/v1/events`, b.adminToken);
    // Longer than the test may run: only the resync can answer it in time.
    const waiting = createApiClient(b.url, agent.token).get(`/v1/requests/${r.id}/wait?timeout=60s`);
    await expect.poll(() => b!.server.deps.waiters.held()).toEqual([r.id]);
    await expect.poll(() => heardByB.map((c) => c.type)).toEqual(['request.created']);

    cutOff = new pg.Client({ connectionString: db.url });
    await cutOff.connect();
    await cutOff.query('BEGIN');
    await cutOff.query('LOCK TABLE changes_pruned IN ACCESS EXCLUSIVE MODE');
    expect((await a.api.post('/v1/rules', { id: 'while-cut-off', match: { title: '^Ruled' }, action: 'approve' })).status).toBe(201);
    expect((await a.api.request('PUT', '/v1/auto', { mode: 'low' })).status).toBe(200);
    expect((await decide(a.api, r, 'approve')).status).toBe(200);
    await pruneChanges(cutOff, Date.now() + 60_000);
    await cutOff.query('COMMIT');

    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ id: r.id, status: 'approved' });
    expect(await reviewer.nextMatching((m) => m.type === 'request.decided')).toMatchObject({ request: { id: r.id, status: 'approved' } });
    reviewer.socket.close();
    // Nothing A did while B was cut off was read from the log: B heard of it through the resync.
    expect(heardByB.map((c) => c.type)).toEqual(['request.created', 'changes.lost']);
    expect(policyOnB).toEqual([
      { type: 'rules.changed', remote: true },
      { type: 'auto.changed', auto: expect.objectContaining({ mode: 'low' }), remote: true },
    ]);
    await expect
      .poll(() => lines.filter((l) => l.level === 40 && /resynced/.test(l.msg)))
      .toEqual([expect.objectContaining({ module: 'cluster', announced: 1 })]);
    expect((await createRequest(agent.api, { title: 'Ruled on A' })).decision).toMatchObject({ decided_by: 'rule', rule_id: 'while-cut-off' });
    const onB = await createRequest(createApiClient(b.url, agent.token), { title: 'Ruled on B' });
    expect(onB.decision).toMatchObject({ decided_by: 'rule', rule_id: 'while-cut-off' });
  });
});

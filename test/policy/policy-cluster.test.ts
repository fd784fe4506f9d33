import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeClock } from '../helpers/fake-clock.js';
import { freshPostgresSchema, TEST_POSTGRES_URL, type FreshPostgres } from '../helpers/postgres.js';
import { createRequest } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectWs } from '../helpers/ws-client.js';

/**
 * Policy with two daemons on one PostgreSQL database (docs/cluster.md): stored rules, hits and auto
 * mode are shared and apply to every create on every daemon at once; changes reach the other
 * daemon's `/v1/events`; decide hooks run once, on the daemon that created the request.
 */
describe.skipIf(!TEST_POSTGRES_URL)('policy across daemons (PostgreSQL)', () => {
  let db: FreshPostgres | undefined;
  let a: TestServer | undefined;
  let b: TestServer | undefined;
  let c: TestServer | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    for (const s of [c, b, a]) await s?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    a = b = c = db = dir = undefined;
  });

  async function pair(hooksA: unknown[] = [], hooksB: unknown[] = []) {
    db = await freshPostgresSchema();
    a = await startTestServer({ storage: { url: db.url }, decide_hooks: hooksA as never });
    b = await startTestServer({ storage: { url: db.url }, decide_hooks: hooksB as never });
    return { a, b };
  }

  it('a rule added on one daemon decides creates on the other at once, and hits are counted together', async () => {
    const { a, b } = await pair();
    const events = await connectWs(`${b.wsUrl}/v1/events`, b.adminToken);
    expect((await a.api.post('/v1/rules', { id: 'shared', match: { title: '^Shared' }, action: 'approve' })).status).toBe(201);
    expect(await events.nextMatching((m) => m.type === 'rules.changed')).toEqual({ type: 'rules.changed' });
    events.socket.close();
    expect((await createRequest(b.api, { title: 'Shared one' })).decision).toMatchObject({ decided_by: 'rule', rule_id: 'shared' });
    expect((await createRequest(a.api, { title: 'Shared two' })).decision).toMatchObject({ decided_by: 'rule', rule_id: 'shared' });
    expect((await a.api.get('/v1/rules')).body[0]).toMatchObject({ id: 'shared', hits: 2 });
    await b.api.delete('/v1/rules/shared');
    expect((await createRequest(a.api, { title: 'Shared three' })).status).toBe('pending');
  });

  it('auto mode set on one daemon applies on the other, which hears auto.changed; a daemon that starts turns it off for all', async () => {
    const { a, b } = await pair();
    const events = await connectWs(`${b.wsUrl}/v1/events`, b.adminToken);
    const set = await a.api.request('PUT', '/v1/auto', { mode: 'low' });
    expect(await events.nextMatching((m) => m.type === 'auto.changed')).toEqual({ type: 'auto.changed', auto: set.body });
    expect((await createRequest(b.api, { title: 'Low on B' })).decision.decided_by).toBe('auto');
    c = await startTestServer({ storage: { url: db!.url } });
    expect(await events.nextMatching((m) => m.type === 'auto.changed')).toMatchObject({ auto: { mode: 'off', set_by: 'countersign' } });
    events.socket.close();
    expect((await createRequest(b.api, { title: 'Low on B again' })).status).toBe('pending');
    expect((await a.api.get('/v1/auto')).body.mode).toBe('off');
  });

  it('a rule that expires is deleted once, whichever daemon fires first: one rule.expired audit row, rules.changed on both', async () => {
    db = await freshPostgresSchema();
    const start = Math.floor(Date.now() / 1000) * 1000;
    const clocks = [createFakeClock(start), createFakeClock(start)] as const;
    a = await startTestServer({ storage: { url: db.url } }, { clock: clocks[0] });
    b = await startTestServer({ storage: { url: db.url } }, { clock: clocks[1] });
    const onA = await connectWs(`${a.wsUrl}/v1/events`, a.adminToken);
    const onB = await connectWs(`${b.wsUrl}/v1/events`, b.adminToken);
    expect((await a.api.post('/v1/rules', { id: 'brief', match: { title: '^Brief' }, action: 'approve', expires_at: start + 1000 })).status).toBe(201);
    expect((await a.api.post('/v1/rules', { id: 'keep', match: { title: '^Keep' }, action: 'approve' })).status).toBe(201);
    // B has heard of both rules (its timer is armed for the expiry) before the clocks move.
    for (const ws of [onA, onB]) for (let i = 0; i < 2; i++) await ws.nextMatching((m) => m.type === 'rules.changed');
    await b.server.settled();

    // Both daemons' timers fire at once, and each daemon is asked to expire twice more besides.
    for (const clock of clocks) clock.advance(1000);
    const direct = [a, b, a, b].map((s) => s.server.deps.rules.expire());
    const deleted = (await Promise.all(direct)).flat();
    await Promise.all([a.server.settled(), b.server.settled()]);
    expect(deleted.length).toBeLessThanOrEqual(1);

    for (const ws of [onA, onB]) expect(await ws.nextMatching((m) => m.type === 'rules.changed')).toEqual({ type: 'rules.changed' });
    onA.socket.close();
    onB.socket.close();
    expect((await b.api.get('/v1/rules')).body.map((r: any) => r.id)).toEqual(['keep']);
    const log = (await a.api.get('/v1/policy/audit')).body;
    expect(log.filter((e: any) => e.event === 'rule.expired').map((e: any) => [e.actor, e.subject])).toEqual([['timeout', 'brief']]);
    expect(await a.sql('SELECT version FROM policy_state')).toEqual([{ version: 3 }]);
    expect((await createRequest(b.api, { title: 'Brief one' })).status).toBe('pending');
  });

  it('decide hooks run on the daemon that created the request, never again on the other', async () => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-cluster-hooks-'));
    const marker = (name: string) => {
      const path = join(dir!, `${name}.mjs`);
      writeFileSync(path, `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(join(dir!, `${name}.ran`))}, 'x');`);
      return [{ name: 'note', exec: [process.execPath, path] }];
    };
    const { a, b } = await pair(marker('on-a'), marker('on-b'));
    const events = await connectWs(`${b.wsUrl}/v1/events`, b.adminToken);
    const created = await createRequest(a.api, { title: 'Created on A' });
    await events.nextMatching((m) => m.type === 'request.created' && m.request.id === created.id);
    events.socket.close();
    await a.server.hooksIdle();
    await b.server.hooksIdle();
    expect([existsSync(join(dir, 'on-a.ran')), existsSync(join(dir, 'on-b.ran'))]).toEqual([true, false]);
  });
});

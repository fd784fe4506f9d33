import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN } from '../../src/auth/principal.js';
import { RequestEvents } from '../../src/requests/request-events.js';
import { draftFromBody } from '../../src/requests/request-draft.js';
import { CreateRequestSchema } from '../../src/requests/request-schema.js';
import { createRequestService, type RequestService } from '../../src/requests/request-service.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/store.js';
import { createFakeClock, type FakeClock } from '../helpers/fake-clock.js';

/**
 * The deadline holds between `expires_at` and the expiry sweep: nothing decides or cancels a
 * request past it, and the sweep records the deadline itself, however late it runs.
 */
describe('request service: the deadline', () => {
  let dir: string;
  let store: Store;
  let clock: FakeClock;
  let service: RequestService;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-deadline-'));
    store = openSqliteStore(join(dir, 'countersign.db'), { synchronous: 'full' });
    clock = createFakeClock();
    // No expiry scheduler: the sweep runs only when the test calls it.
    service = createRequestService({ store, clock, events: new RequestEvents() });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const create = async () => {
    const draft = draftFromBody(CreateRequestSchema.parse({ title: 'Deploy', timeout: '1s' }), { defaultTimeout: 'none', integration: null });
    return (await service.create(draft, { principal: ADMIN })).stored.record;
  };

  it('refuses a decision or a cancel that arrives after expires_at, before the sweep has run', async () => {
    const r = await create();
    clock.advance(1_000);
    const body = { option: 'approve', content_hash: r.content_hash };
    await expect(service.decide(r.id, body, ADMIN)).rejects.toMatchObject({ code: 'not_pending', details: { status: 'expired' } });
    await expect(service.cancel(r.id, ADMIN)).rejects.toMatchObject({ code: 'not_pending', details: { status: 'expired' } });
    expect((await service.get(r.id, ADMIN)).record.status).toBe('pending');

    // Just before the deadline, a decision still lands.
    const s = await create();
    clock.advance(999);
    expect((await service.decide(s.id, { option: 'approve', content_hash: s.content_hash }, ADMIN)).record.status).toBe('approved');
  });

  it("an upstream follow-up just past the deadline, before the sweep, is taken as the agent's side reports it", async () => {
    const r = await create();
    clock.advance(5_000);
    const { stored, changed } = await service.resolveUpstream(r.id, { status: 'cancelled', decision: null, actor: 'upstream:bridge' });
    expect(changed).toBe(true);
    expect(stored.record.status).toBe('cancelled');
    // The reply hook skips what the upstream ended (an upstream actor): no answer goes back to it.
    expect((await store.requests.audit(r.id)).at(-1)).toMatchObject({ event: 'cancelled', actor: 'upstream:bridge' });
  });

  it('a dedupe key or a native frame that names a request past its deadline, before the sweep, meets it expired', async () => {
    const body = (title: string) =>
      draftFromBody(CreateRequestSchema.parse({ title, timeout: '1s', dedupe_key: 'deploy-1' }), { defaultTimeout: 'none', integration: null });
    const first = (await service.create(body('Deploy'), { principal: ADMIN })).stored.record;
    clock.advance(5_000);
    // The same key with the same content: a new request, not the one about to expire.
    const again = await service.create(body('Deploy'), { principal: ADMIN });
    expect(again.created).toBe(true);
    expect(again.stored.record).toMatchObject({ status: 'pending', dedupe_key: 'deploy-1' });
    expect(again.stored.record.id).not.toBe(first.id);
    const old = await service.get(first.id, ADMIN);
    expect(old.record).toMatchObject({ status: 'expired', decision: { decided_by: 'timeout', decided_at: first.expires_at } });
    expect((await store.requests.audit(first.id)).filter((a) => a.event === 'expired')).toHaveLength(1);
    // With other content: no dedupe_conflict with a request that is over.
    clock.advance(5_000);
    expect((await service.create(body('Deploy elsewhere'), { principal: ADMIN })).created).toBe(true);
    expect((await service.get(again.stored.record.id, ADMIN)).record.status).toBe('expired');
    // The sweep finds nothing left to expire twice.
    expect((await service.expireDue()).map((s) => s.record.title)).toEqual([]);

    const native = { key: 'toy:1', frame: { id: 1 }, context: null };
    const draft = draftFromBody(CreateRequestSchema.parse({ title: 'Native', timeout: '1s', dedupe_key: 'toy:1' }), {
      defaultTimeout: 'none',
      integration: null,
    });
    const made = (await service.create(draft, { principal: ADMIN, format: 'toy', native })).stored.record;
    clock.advance(5_000);
    const replay = await service.create(draft, { principal: ADMIN, format: 'toy', native });
    expect(replay.created).toBe(false);
    expect(replay.stored.record).toMatchObject({ id: made.id, status: 'expired' });
    // Only the request no create met since its deadline is left to the sweep.
    expect((await service.expireDue()).map((s) => s.record.title)).toEqual(['Deploy elsewhere']);
  });

  it('records the deadline as the time of expiry, also when the sweep runs long after it', async () => {
    const r = await create();
    clock.advance(60_000);
    const [expired] = await service.expireDue();
    expect(expired!.record).toMatchObject({ status: 'expired', decision: { decided_by: 'timeout', decided_at: r.expires_at } });
    expect(expired!.resolvedAt).toBe(r.expires_at);
    const audit = await store.requests.audit(r.id);
    expect(audit.at(-1)).toMatchObject({ event: 'expired', actor: 'timeout', at: r.expires_at });
  });
});

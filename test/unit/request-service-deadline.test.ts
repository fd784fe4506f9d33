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

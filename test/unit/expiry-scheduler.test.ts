import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN } from '../../src/auth/principal.js';
import { createExpiryScheduler, type ExpiryScheduler } from '../../src/requests/expiry-scheduler.js';
import { RequestEvents, type RequestEvent } from '../../src/requests/request-events.js';
import { draftFromBody } from '../../src/requests/request-draft.js';
import { CreateRequestSchema } from '../../src/requests/request-schema.js';
import { createRequestService, type RequestService } from '../../src/requests/request-service.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/store.js';
import { createFakeClock, type FakeClock } from '../helpers/fake-clock.js';

const MAX_TIMER_MS = 2_147_483_647;

describe('expiry scheduler (fake clock, real SQLite file)', () => {
  let dir: string;
  let store: Store;
  let clock: FakeClock;
  let events: RequestEvents;
  let service: RequestService;
  let scheduler: ExpiryScheduler | null;
  let expired: RequestEvent[];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-expiry-'));
    store = openSqliteStore(join(dir, 'countersign.db'), { synchronous: 'full' });
    clock = createFakeClock();
    events = new RequestEvents();
    service = createRequestService({ store, clock, events });
    expired = [];
    events.on((e) => e.type === 'request.expired' && expired.push(e));
    scheduler = null;
  });
  afterEach(async () => {
    scheduler?.stop();
    await scheduler?.idle();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start() {
    scheduler = createExpiryScheduler({ service, events, clock, log: pino({ level: 'silent' }) });
    await scheduler.start();
    return scheduler;
  }

  /** Moves the clock, letting each timer's sweep finish (and re-arm) before the next one fires. */
  async function advance(ms: number) {
    const target = clock.now() + ms;
    for (;;) {
      await scheduler?.idle();
      const next = clock.nextAt();
      if (next === null || next > target) break;
      clock.set(next);
    }
    clock.set(target);
    await scheduler?.idle();
  }

  async function create(timeout: string | null, extra: Record<string, unknown> = {}) {
    const draft = draftFromBody(CreateRequestSchema.parse({ title: 't', timeout, ...extra }), { defaultTimeout: 'none', integration: null });
    const record = (await service.create(draft, { principal: ADMIN })).stored.record;
    await scheduler?.idle();
    return record;
  }

  const status = async (id: string) => (await service.get(id, ADMIN)).record.status;
  const auditEvents = async (id: string) => (await service.audit(id, ADMIN)).map((a) => a.event);

  it('arms no timer when nothing can expire', async () => {
    await create(null);
    const s = await start();
    expect(s.armedFor()).toBeNull();
    expect(clock.pending()).toBe(0);
  });

  it('keeps one timer, armed for the next deadline, and re-arms after each expiry', async () => {
    const s = await start();
    const later = await create('10m');
    const sooner = await create('5m');
    const latest = await create('1h');
    expect(clock.pending()).toBe(1);
    expect(s.armedFor()).toBe(sooner.expires_at);

    await advance(5 * 60_000 - 1);
    expect(await status(sooner.id)).toBe('pending');
    await advance(1);
    expect(await status(sooner.id)).toBe('expired');
    expect(await status(later.id)).toBe('pending');
    expect(s.armedFor()).toBe(later.expires_at);
    expect(clock.pending()).toBe(1);

    await advance(5 * 60_000);
    expect(await status(later.id)).toBe('expired');
    expect(s.armedFor()).toBe(latest.expires_at);
    await advance(50 * 60_000);
    expect(await status(latest.id)).toBe('expired');
    expect(s.armedFor()).toBeNull();
    expect(clock.pending()).toBe(0);
    expect(expired.map((e) => e.request.id)).toEqual([sooner.id, later.id, latest.id]);
  });

  it('re-arms for a new request with an earlier deadline, not for a later one', async () => {
    const s = await start();
    const a = await create('1h');
    expect(s.armedFor()).toBe(a.expires_at);
    const b = await create('2h');
    expect(s.armedFor()).toBe(a.expires_at);
    const c = await create('1m');
    expect(s.armedFor()).toBe(c.expires_at);
    expect(clock.pending()).toBe(1);
    await advance(60_000);
    expect(await status(c.id)).toBe('expired');
    expect(s.armedFor()).toBe(a.expires_at);
    expect(await status(b.id)).toBe('pending');
  });

  it('re-arms for a request created while a sweep is running', async () => {
    const s = await start();
    await create('1m');
    const later = await create('1h');
    clock.set(clock.now() + 60_000); // fires the sweep; do not wait for it
    const meanwhile = await create('30s');
    await s.idle();
    expect(s.armedFor()).toBe(meanwhile.expires_at);
    await advance(30_000);
    expect(await status(meanwhile.id)).toBe('expired');
    expect(await status(later.id)).toBe('pending');
  });

  it('re-arms when the request it waits for is decided first, without expiring it', async () => {
    const s = await start();
    const a = await create('1m');
    const b = await create('5m');
    await service.decide(a.id, { option: 'approve', content_hash: a.content_hash }, ADMIN);
    await advance(60_000);
    expect(await status(a.id)).toBe('approved');
    expect(await auditEvents(a.id)).toEqual(['created', 'decided']);
    expect(s.armedFor()).toBe(b.expires_at);
    await advance(4 * 60_000);
    expect(await status(b.id)).toBe('expired');
    expect(expired.map((e) => e.request.id)).toEqual([b.id]);
  });

  it('expires at start what came due while it was not running; pending ones keep waiting', async () => {
    const due1 = await create('1m');
    const due2 = await create('2m', { on_timeout: 'approve' });
    const notYet = await create('1h');
    clock.advance(10 * 60_000); // no scheduler: nothing happens
    expect(await status(due1.id)).toBe('pending');
    const s = await start();
    expect(await status(due1.id)).toBe('expired');
    expect(await status(due2.id)).toBe('expired');
    expect((await service.get(due2.id, ADMIN)).record.decision).toMatchObject({ outcome: 'approve', decided_by: 'timeout' });
    // Expired at start-up, recorded at the deadline it had (the decision could not have come later).
    expect((await service.get(due1.id, ADMIN)).record.decision?.decided_at).toBe(due1.expires_at);
    expect(due1.expires_at).toBeLessThan(clock.now());
    expect(await status(notYet.id)).toBe('pending');
    expect(s.armedFor()).toBe(notYet.expires_at);
  });

  it('applies each expiry exactly once', async () => {
    const ids = [(await create('1m')).id, (await create('1m')).id, (await create('1m', { on_timeout: 'expire' })).id];
    await start();
    await advance(60_000);
    expect(await service.expireDue()).toEqual([]);
    await advance(60_000);
    expect(await service.expireDue()).toEqual([]);
    for (const id of ids) expect(await auditEvents(id)).toEqual(['created', 'expired']);
    expect(expired.map((e) => e.request.id).sort()).toEqual([...ids].sort());
    // A second scheduler on the same database (e.g. a restart) finds nothing more to do.
    scheduler!.stop();
    await start();
    expect(expired).toHaveLength(3);
  });

  it('applies each expiry once when two sweeps race', async () => {
    const ids = [(await create('1m')).id, (await create('1m')).id];
    clock.advance(60_000);
    const [a, b] = await Promise.all([service.expireDue(), service.expireDue()]);
    expect([...a, ...b].map((s) => s.record.id).sort()).toEqual([...ids].sort());
    for (const id of ids) expect(await auditEvents(id)).toEqual(['created', 'expired']);
  });

  it('expires more than one batch (500) at once', async () => {
    for (let i = 0; i < 501; i++) await create('1s');
    await start();
    await advance(1000);
    expect(expired).toHaveLength(501);
    expect(new Set(expired.map((e) => e.request.id)).size).toBe(501);
    expect(await service.list({ status: ['pending'], limit: 500 })).toEqual([]);
  });

  it('reaches deadlines beyond the longest timer delay in hops', async () => {
    const s = await start();
    const r = await create('365d');
    await advance(MAX_TIMER_MS);
    expect(await status(r.id)).toBe('pending');
    expect(clock.pending()).toBe(1);
    expect(s.armedFor()).toBe(r.expires_at);
    await advance(r.expires_at! - clock.now());
    expect(await status(r.id)).toBe('expired');
  });

  it('stop() clears the timer; nothing expires after it', async () => {
    const s = await start();
    const r = await create('1m');
    s.stop();
    expect(clock.pending()).toBe(0);
    await advance(120_000);
    expect(await status(r.id)).toBe('pending');
    await create('1s');
    expect(clock.pending()).toBe(0);
  });
});

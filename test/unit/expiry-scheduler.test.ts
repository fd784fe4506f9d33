import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN } from '../../src/auth/principal.js';
import { openDatabase, type Db } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { createExpiryScheduler, type ExpiryScheduler } from '../../src/requests/expiry-scheduler.js';
import { RequestEvents, type RequestEvent } from '../../src/requests/request-events.js';
import { draftFromBody } from '../../src/requests/request-draft.js';
import { createRequestRepository } from '../../src/requests/request-repository.js';
import { CreateRequestSchema } from '../../src/requests/request-schema.js';
import { createRequestService, type RequestService } from '../../src/requests/request-service.js';
import { createFakeClock, type FakeClock } from '../helpers/fake-clock.js';

const MAX_TIMER_MS = 2_147_483_647;

describe('expiry scheduler (fake clock, real SQLite file)', () => {
  let dir: string;
  let db: Db;
  let clock: FakeClock;
  let events: RequestEvents;
  let service: RequestService;
  let scheduler: ExpiryScheduler | null;
  let expired: RequestEvent[];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-expiry-'));
    db = openDatabase(join(dir, 'countersign.db'), { synchronous: 'full' });
    migrate(db);
    clock = createFakeClock();
    events = new RequestEvents();
    service = createRequestService({ db, repo: createRequestRepository(db), clock, events });
    expired = [];
    events.on((e) => e.type === 'request.expired' && expired.push(e));
    scheduler = null;
  });
  afterEach(() => {
    scheduler?.stop();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function start() {
    scheduler = createExpiryScheduler({ service, events, clock, log: pino({ level: 'silent' }) });
    scheduler.start();
    return scheduler;
  }

  function create(timeout: string | null, extra: Record<string, unknown> = {}) {
    const draft = draftFromBody(CreateRequestSchema.parse({ title: 't', timeout, ...extra }), { defaultTimeout: 'none', integration: null });
    return service.create(draft, { principal: ADMIN }).stored.record;
  }

  const status = (id: string) => service.get(id, ADMIN).record.status;
  const auditEvents = (id: string) => service.audit(id, ADMIN).map((a) => a.event);

  it('arms no timer when nothing can expire', () => {
    create(null);
    const s = start();
    expect(s.armedFor()).toBeNull();
    expect(clock.pending()).toBe(0);
  });

  it('keeps one timer, armed for the next deadline, and re-arms after each expiry', () => {
    const s = start();
    const later = create('10m');
    const sooner = create('5m');
    const latest = create('1h');
    expect(clock.pending()).toBe(1);
    expect(s.armedFor()).toBe(sooner.expires_at);

    clock.advance(5 * 60_000 - 1);
    expect(status(sooner.id)).toBe('pending');
    clock.advance(1);
    expect(status(sooner.id)).toBe('expired');
    expect(status(later.id)).toBe('pending');
    expect(s.armedFor()).toBe(later.expires_at);
    expect(clock.pending()).toBe(1);

    clock.advance(5 * 60_000);
    expect(status(later.id)).toBe('expired');
    expect(s.armedFor()).toBe(latest.expires_at);
    clock.advance(50 * 60_000);
    expect(status(latest.id)).toBe('expired');
    expect(s.armedFor()).toBeNull();
    expect(clock.pending()).toBe(0);
    expect(expired.map((e) => e.request.id)).toEqual([sooner.id, later.id, latest.id]);
  });

  it('re-arms for a new request with an earlier deadline, not for a later one', () => {
    const s = start();
    const a = create('1h');
    expect(s.armedFor()).toBe(a.expires_at);
    const b = create('2h');
    expect(s.armedFor()).toBe(a.expires_at);
    const c = create('1m');
    expect(s.armedFor()).toBe(c.expires_at);
    expect(clock.pending()).toBe(1);
    clock.advance(60_000);
    expect(status(c.id)).toBe('expired');
    expect(s.armedFor()).toBe(a.expires_at);
    expect(status(b.id)).toBe('pending');
  });

  it('re-arms when the request it waits for is decided first, without expiring it', () => {
    const s = start();
    const a = create('1m');
    const b = create('5m');
    service.decide(a.id, { option: 'approve', content_hash: a.content_hash }, ADMIN);
    clock.advance(60_000);
    expect(status(a.id)).toBe('approved');
    expect(auditEvents(a.id)).toEqual(['created', 'decided']);
    expect(s.armedFor()).toBe(b.expires_at);
    clock.advance(4 * 60_000);
    expect(status(b.id)).toBe('expired');
    expect(expired.map((e) => e.request.id)).toEqual([b.id]);
  });

  it('expires at start what came due while it was not running; pending ones keep waiting', () => {
    const due1 = create('1m');
    const due2 = create('2m', { on_timeout: 'approve' });
    const notYet = create('1h');
    clock.advance(10 * 60_000); // no scheduler: nothing happens
    expect(status(due1.id)).toBe('pending');
    const s = start();
    expect(status(due1.id)).toBe('expired');
    expect(status(due2.id)).toBe('expired');
    expect(service.get(due2.id, ADMIN).record.decision).toMatchObject({ outcome: 'approve', decided_by: 'timeout' });
    // Expired at start-up time, the moment the daemon could act.
    expect(service.get(due1.id, ADMIN).record.decision?.decided_at).toBe(clock.now());
    expect(status(notYet.id)).toBe('pending');
    expect(s.armedFor()).toBe(notYet.expires_at);
  });

  it('applies each expiry exactly once', () => {
    const ids = [create('1m').id, create('1m').id, create('1m', { on_timeout: 'expire' }).id];
    start();
    clock.advance(60_000);
    expect(service.expireDue()).toEqual([]);
    clock.advance(60_000);
    expect(service.expireDue()).toEqual([]);
    for (const id of ids) expect(auditEvents(id)).toEqual(['created', 'expired']);
    expect(expired.map((e) => e.request.id).sort()).toEqual([...ids].sort());
    // A second scheduler on the same database (e.g. a restart) finds nothing more to do.
    scheduler!.stop();
    start();
    expect(expired).toHaveLength(3);
  });

  it('expires more than one batch (500) at once', () => {
    for (let i = 0; i < 501; i++) create('1s');
    start();
    clock.advance(1000);
    expect(expired).toHaveLength(501);
    expect(new Set(expired.map((e) => e.request.id)).size).toBe(501);
    expect(service.list({ status: ['pending'], limit: 500 })).toEqual([]);
  });

  it('reaches deadlines beyond the longest timer delay in hops', () => {
    const s = start();
    const r = create('365d');
    clock.advance(MAX_TIMER_MS);
    expect(status(r.id)).toBe('pending');
    expect(clock.pending()).toBe(1);
    expect(s.armedFor()).toBe(r.expires_at);
    clock.advance(r.expires_at! - clock.now());
    expect(status(r.id)).toBe('expired');
  });

  it('stop() clears the timer; nothing expires after it', () => {
    const s = start();
    const r = create('1m');
    s.stop();
    expect(clock.pending()).toBe(0);
    clock.advance(120_000);
    expect(status(r.id)).toBe('pending');
    create('1s');
    expect(clock.pending()).toBe(0);
  });
});

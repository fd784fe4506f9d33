import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN } from '../../src/auth/principal.js';
import { openDatabase, type Db } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { AppError } from '../../src/errors.js';
import { RequestEvents, type RequestEvent } from '../../src/requests/request-events.js';
import { draftFromBody } from '../../src/requests/request-draft.js';
import { createRequestRepository } from '../../src/requests/request-repository.js';
import { CreateRequestSchema } from '../../src/requests/request-schema.js';
import { createRequestService, type DecisionCheck, type RequestService, type TerminalTransition } from '../../src/requests/request-service.js';
import { createFakeClock } from '../helpers/fake-clock.js';

/** Superseding on create and decision checks, on a real SQLite file: what commits together, and what events follow. */
describe('request service: supersede and decision checks', () => {
  let dir: string;
  let db: Db;
  let events: RequestEvents;
  let heard: RequestEvent[];
  let hooks: TerminalTransition[];
  let checks: DecisionCheck[];
  let service: RequestService;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-supersede-'));
    db = openDatabase(join(dir, 'countersign.db'), { synchronous: 'full' });
    migrate(db);
    events = new RequestEvents();
    heard = [];
    hooks = [];
    checks = [];
    events.on((e) => heard.push(e));
    service = createRequestService({
      db,
      repo: createRequestRepository(db),
      clock: createFakeClock(),
      events,
      terminalHooks: [(t) => hooks.push(t)],
      decisionChecks: [(stored) => checks.forEach((c) => c(stored))],
    });
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const draft = (title: string, session: string) => {
    const { timeoutMs, ...fields } = draftFromBody(CreateRequestSchema.parse({ title, kind: 'review', source: { session } }), { defaultTimeout: 'none', integration: null });
    return { ...fields, timeoutMs };
  };
  const create = (title: string, session: string, supersede?: Parameters<RequestService['create']>[1]['supersede']) =>
    service.create(draft(title, session), { principal: ADMIN, format: 'ask', native: { key: `k:${title}`, frame: {}, context: { title } }, ...(supersede ? { supersede } : {}) }).stored;

  it('ends the matching pending requests of the session in the creating write, audited, with events after commit', () => {
    const old = create('plan 1', 's-1');
    const otherSession = create('plan x', 's-2');
    const unmatched = create('approval', 's-1');
    heard.length = 0;
    const newer = create('plan 2', 's-1', {
      matches: (s) => (s.nativeContext as { title: string }).title.startsWith('plan'),
      actor: 'upstream',
      details: { format: 'ask', native_key: 'k:plan 2' },
    });
    expect(service.get(old.record.id, ADMIN).record).toMatchObject({ status: 'cancelled', decision: null });
    expect(service.get(otherSession.record.id, ADMIN).record.status).toBe('pending');
    expect(service.get(unmatched.record.id, ADMIN).record.status).toBe('pending');
    expect(service.get(newer.record.id, ADMIN).record.status).toBe('pending');
    expect(service.audit(old.record.id, ADMIN).map((a) => [a.event, a.actor, a.details])).toEqual([
      ['created', 'admin', { format: 'ask' }],
      ['superseded', 'upstream', { format: 'ask', native_key: 'k:plan 2', superseded_by: newer.record.id }],
    ]);
    expect(hooks.map((h) => [h.stored.record.id, h.type, h.actor])).toEqual([[old.record.id, 'request.cancelled', 'upstream']]);
    expect(heard.map((e) => [e.type, e.request.id])).toEqual([
      ['request.created', newer.record.id],
      ['request.cancelled', old.record.id],
    ]);
  });

  it('rolls the new request back with the superseding when either fails: one transaction', () => {
    const old = create('plan 1', 's-1');
    expect(() =>
      create('plan 2', 's-1', {
        matches: () => {
          throw new Error('boom');
        },
        actor: 'upstream',
      }),
    ).toThrow('boom');
    expect(service.get(old.record.id, ADMIN).record.status).toBe('pending');
    expect(service.list({ limit: 10 }).map((s) => s.record.title)).toEqual(['plan 1']);
  });

  it('a failing decision check refuses the decision: nothing stored, no hook, no event', () => {
    const r = create('plan 1', 's-1');
    heard.length = 0;
    checks.push((decided) => {
      expect(decided.record).toMatchObject({ status: 'approved', decision: { option: 'approve' } });
      throw new AppError('invalid_decision', 'fields.answers.q: nope');
    });
    expect(() => service.decide(r.record.id, { option: 'approve', content_hash: r.record.content_hash }, ADMIN)).toThrow('fields.answers.q: nope');
    expect(service.get(r.record.id, ADMIN).record.status).toBe('pending');
    expect(service.audit(r.record.id, ADMIN).map((a) => a.event)).toEqual(['created']);
    expect(hooks).toEqual([]);
    expect(heard).toEqual([]);
  });
});

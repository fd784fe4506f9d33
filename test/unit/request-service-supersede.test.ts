import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN } from '../../src/auth/principal.js';
import { AppError } from '../../src/lib/errors.js';
import { RequestEvents, type RequestEvent } from '../../src/requests/request-events.js';
import { draftFromBody } from '../../src/requests/request-draft.js';
import { CreateRequestSchema } from '../../src/requests/request-schema.js';
import type { DecisionCheck, TerminalTransition } from '../../src/requests/request-hooks.js';
import { createRequestService, type RequestService } from '../../src/requests/request-service.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/store.js';
import { createFakeClock } from '../helpers/fake-clock.js';

/** Superseding on create and decision checks, on a real SQLite file: what commits together, and what events follow. */
describe('request service: supersede and decision checks', async () => {
  let dir: string;
  let store: Store;
  let events: RequestEvents;
  let heard: RequestEvent[];
  let hooks: TerminalTransition[];
  let checks: DecisionCheck[];
  let service: RequestService;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-supersede-'));
    store = openSqliteStore(join(dir, 'countersign.db'), { synchronous: 'full' });
    events = new RequestEvents();
    heard = [];
    hooks = [];
    checks = [];
    events.on((e) => heard.push(e));
    service = createRequestService({
      store,
      clock: createFakeClock(),
      events,
      terminalHooks: [async (t) => void hooks.push(t)],
      decisionChecks: [(stored) => checks.forEach((c) => c(stored))],
    });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const draft = (title: string, session: string) => {
    const { timeoutMs, ...fields } = draftFromBody(CreateRequestSchema.parse({ title, kind: 'review', source: { session } }), {
      defaultTimeout: 'none',
      integration: null,
    });
    return { ...fields, timeoutMs };
  };
  const create = async (title: string, session: string, supersede?: Parameters<RequestService['create']>[1]['supersede']) =>
    (
      await service.create(draft(title, session), {
        principal: ADMIN,
        format: 'ask',
        native: { key: `k:${title}`, frame: {}, context: { title } },
        ...(supersede ? { supersede } : {}),
      })
    ).stored;
  const get = async (id: string) => (await service.get(id, ADMIN)).record;

  it('ends the matching pending requests of the session in the creating write, audited, with events after commit', async () => {
    const old = await create('plan 1', 's-1');
    const otherSession = await create('plan x', 's-2');
    const unmatched = await create('approval', 's-1');
    heard.length = 0;
    const newer = await create('plan 2', 's-1', {
      matches: (s) => (s.nativeContext as { title: string }).title.startsWith('plan'),
      actor: 'upstream',
      details: { format: 'ask', native_key: 'k:plan 2' },
    });
    expect(await get(old.record.id)).toMatchObject({ status: 'cancelled', decision: null });
    expect((await get(otherSession.record.id)).status).toBe('pending');
    expect((await get(unmatched.record.id)).status).toBe('pending');
    expect((await get(newer.record.id)).status).toBe('pending');
    expect((await service.audit(old.record.id, ADMIN)).map((a) => [a.event, a.actor, a.details])).toEqual([
      ['created', 'admin', { format: 'ask' }],
      ['superseded', 'upstream', { format: 'ask', native_key: 'k:plan 2', superseded_by: newer.record.id }],
    ]);
    expect(hooks.map((h) => [h.stored.record.id, h.type, h.actor])).toEqual([[old.record.id, 'request.cancelled', 'upstream']]);
    expect(heard.map((e) => [e.type, e.request.id])).toEqual([
      ['request.created', newer.record.id],
      ['request.cancelled', old.record.id],
    ]);
  });

  it('rolls the new request back with the superseding when either fails: one transaction', async () => {
    const old = await create('plan 1', 's-1');
    await expect(
      create('plan 2', 's-1', {
        matches: () => {
          throw new Error('boom');
        },
        actor: 'upstream',
      }),
    ).rejects.toThrow('boom');
    expect((await get(old.record.id)).status).toBe('pending');
    expect((await service.list({ limit: 10 })).map((s) => s.record.title)).toEqual(['plan 1']);
  });

  it('a failing decision check refuses the decision: nothing stored, no hook, no event', async () => {
    const r = await create('plan 1', 's-1');
    heard.length = 0;
    checks.push((decided) => {
      expect(decided.record).toMatchObject({ status: 'approved', decision: { option: 'approve' } });
      throw new AppError('invalid_decision', 'fields.answers.q: nope');
    });
    await expect(service.decide(r.record.id, { option: 'approve', content_hash: r.record.content_hash }, ADMIN)).rejects.toThrow('fields.answers.q: nope');
    expect((await get(r.record.id)).status).toBe('pending');
    expect((await service.audit(r.record.id, ADMIN)).map((a) => a.event)).toEqual(['created']);
    expect(hooks).toEqual([]);
    expect(heard).toEqual([]);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN } from '../../src/auth/principal.js';
import { createCallbackOutboxHook } from '../../src/callbacks/callback-outbox-hook.js';
import { createDeliveryRepository } from '../../src/callbacks/delivery-repository.js';
import { openDatabase, type Db } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { draftFromBody } from '../../src/requests/request-draft.js';
import { RequestEvents } from '../../src/requests/request-events.js';
import { createRequestRepository } from '../../src/requests/request-repository.js';
import { CreateRequestSchema } from '../../src/requests/request-schema.js';
import { createRequestService, type TerminalHook } from '../../src/requests/request-service.js';
import { createFakeClock } from '../helpers/fake-clock.js';

/** The outbox row is part of the terminal transaction: it commits and rolls back with it. */
describe('callback outbox hook', () => {
  let dir: string;
  let db: Db;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-outbox-'));
    db = openDatabase(join(dir, 'countersign.db'), { synchronous: 'full' });
    migrate(db);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function wire(extraHooks: TerminalHook[] = []) {
    const clock = createFakeClock();
    const deliveries = createDeliveryRepository(db);
    const repo = createRequestRepository(db);
    const service = createRequestService({ db, repo, clock, events: new RequestEvents(), terminalHooks: [...extraHooks, createCallbackOutboxHook({ deliveries })] });
    const create = (body: Record<string, unknown>) =>
      service.create(draftFromBody(CreateRequestSchema.parse({ title: 'Deploy', ...body }), { defaultTimeout: 'none', integration: null }), { principal: ADMIN }).stored.record;
    return { clock, deliveries, repo, service, create };
  }

  it('writes one pending row with the exact body, due at the transition', () => {
    const { clock, deliveries, service, create } = wire();
    const r = create({ callback_url: 'https://hooks.example.com/cb' });
    clock.advance(1234);
    const decided = service.decide(r.id, { option: 'approve', content_hash: r.content_hash }, ADMIN).record;
    const [d] = deliveries.listForRequest(r.id);
    expect(d).toMatchObject({ request_id: r.id, type: 'request.decided', url: 'https://hooks.example.com/cb', state: 'pending', next_attempt_at: clock.now(), created_at: clock.now(), attempts: [] });
    const row = db.prepare('SELECT body FROM callback_deliveries WHERE id = ?').get(d!.id) as { body: string };
    expect(JSON.parse(row.body)).toEqual({ v: 1, type: 'request.decided', id: d!.id, time: new Date(clock.now()).toISOString(), data: { request: decided, decision: decided.decision } });
  });

  it('writes nothing for a request without callback_url', () => {
    const { service, create } = wire();
    const r = create({});
    service.cancel(r.id, ADMIN);
    expect((db.prepare('SELECT COUNT(*) AS n FROM callback_deliveries').get() as { n: number }).n).toBe(0);
  });

  it('a failed outbox write rolls the decision back: no decision, no audit row, still pending', () => {
    const { repo, service, create } = wire();
    const r = create({ callback_url: 'https://hooks.example.com/cb' });
    db.exec(`CREATE TRIGGER fail_outbox BEFORE INSERT ON callback_deliveries BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
    expect(() => service.decide(r.id, { option: 'approve', content_hash: r.content_hash }, ADMIN)).toThrow(/disk full/);
    expect(repo.get(r.id)!.record).toMatchObject({ status: 'pending', decision: null });
    expect(repo.audit(r.id).map((a) => a.event)).toEqual(['created']);
  });

  it('native requests carry format and the reply an earlier hook rendered', () => {
    const replyHook: TerminalHook = ({ stored }) => {
      stored.nativeReply = { id: 1, method: 'interaction/approve' };
    };
    const { deliveries, service } = wire([replyHook]);
    const draft = draftFromBody(CreateRequestSchema.parse({ title: 'bash', callback_url: 'https://hooks.example.com/cb' }), { defaultTimeout: 'none', integration: null });
    const r = service.create(draft, { principal: ADMIN, format: 'ask', native: { key: 'ask:s-1:act_1', frame: {}, context: {} } }).stored.record;
    service.decide(r.id, { option: 'approve', content_hash: r.content_hash }, ADMIN);
    const [d] = deliveries.listForRequest(r.id);
    const body = JSON.parse((db.prepare('SELECT body FROM callback_deliveries WHERE id = ?').get(d!.id) as { body: string }).body);
    expect(body).toMatchObject({ format: 'ask', reply: { id: 1, method: 'interaction/approve' } });
    expect(Object.keys(body)).toEqual(['v', 'type', 'id', 'time', 'data', 'format', 'reply']);
  });
});

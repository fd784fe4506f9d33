import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN } from '../../src/auth/principal.js';
import { createCallbackOutboxHook } from '../../src/callbacks/callback-outbox-hook.js';
import { draftFromBody } from '../../src/requests/request-draft.js';
import { RequestEvents } from '../../src/requests/request-events.js';
import { CreateRequestSchema } from '../../src/requests/request-schema.js';
import type { TerminalHook } from '../../src/requests/request-hooks.js';
import { createRequestService } from '../../src/requests/request-service.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/store.js';
import { createFakeClock } from '../helpers/fake-clock.js';

/** The outbox row is part of the terminal transaction: it commits and rolls back with it. */
describe('callback outbox hook', () => {
  let dir: string;
  let store: Store;
  let raw: Database.Database;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-outbox-'));
    store = openSqliteStore(join(dir, 'countersign.db'), { synchronous: 'full' });
    raw = new Database(join(dir, 'countersign.db'));
  });
  afterEach(async () => {
    raw.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function wire(extraHooks: TerminalHook[] = []) {
    const clock = createFakeClock();
    const service = createRequestService({ store, clock, events: new RequestEvents(), terminalHooks: [...extraHooks, createCallbackOutboxHook()] });
    const create = async (body: Record<string, unknown>) =>
      (
        await service.create(draftFromBody(CreateRequestSchema.parse({ title: 'Deploy', ...body }), { defaultTimeout: 'none', integration: null }), {
          principal: ADMIN,
        })
      ).stored.record;
    return { clock, service, create };
  }
  const bodyOf = (id: string) => JSON.parse((raw.prepare('SELECT body FROM callback_deliveries WHERE id = ?').get(id) as { body: string }).body);

  it('writes one pending row with the exact body, due at the transition', async () => {
    const { clock, service, create } = wire();
    const r = await create({ callback_url: 'https://hooks.example.com/cb' });
    clock.advance(1234);
    const decided = (await service.decide(r.id, { option: 'approve', content_hash: r.content_hash }, ADMIN)).record;
    const [d] = await store.deliveries.listForRequest(r.id);
    expect(d).toMatchObject({
      request_id: r.id,
      type: 'request.decided',
      url: 'https://hooks.example.com/cb',
      state: 'pending',
      next_attempt_at: clock.now(),
      created_at: clock.now(),
      attempts: [],
    });
    expect(bodyOf(d!.id)).toEqual({
      v: 1,
      type: 'request.decided',
      id: d!.id,
      time: new Date(clock.now()).toISOString(),
      data: { request: decided, decision: decided.decision },
    });
  });

  it('writes nothing for a request without callback_url', async () => {
    const { service, create } = wire();
    const r = await create({});
    await service.cancel(r.id, ADMIN);
    expect((raw.prepare('SELECT COUNT(*) AS n FROM callback_deliveries').get() as { n: number }).n).toBe(0);
  });

  it('a failed outbox write rolls the decision back: no decision, no audit row, still pending', async () => {
    const { service, create } = wire();
    const r = await create({ callback_url: 'https://hooks.example.com/cb' });
    raw.exec(`CREATE TRIGGER fail_outbox BEFORE INSERT ON callback_deliveries BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
    await expect(service.decide(r.id, { option: 'approve', content_hash: r.content_hash }, ADMIN)).rejects.toThrow(/disk full/);
    expect((await store.requests.get(r.id))!.record).toMatchObject({ status: 'pending', decision: null });
    expect((await store.requests.audit(r.id)).map((a) => a.event)).toEqual(['created']);
  });

  it('native requests carry format and the reply an earlier hook rendered', async () => {
    const replyHook: TerminalHook = async ({ stored }) => {
      stored.nativeReply = { id: 1, method: 'interaction/approve' };
    };
    const { service } = wire([replyHook]);
    const draft = draftFromBody(CreateRequestSchema.parse({ title: 'bash', callback_url: 'https://hooks.example.com/cb' }), {
      defaultTimeout: 'none',
      integration: null,
    });
    const r = (await service.create(draft, { principal: ADMIN, format: 'ask', native: { key: 'ask:s-1:act_1', frame: {}, context: {} } })).stored.record;
    await service.decide(r.id, { option: 'approve', content_hash: r.content_hash }, ADMIN);
    const [d] = await store.deliveries.listForRequest(r.id);
    const body = bodyOf(d!.id);
    expect(body).toMatchObject({ format: 'ask', reply: { id: 1, method: 'interaction/approve' } });
    expect(Object.keys(body)).toEqual(['v', 'type', 'id', 'time', 'data', 'format', 'reply']);
  });
});

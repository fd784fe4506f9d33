import { afterEach, describe, expect, it } from 'vitest';
import { freshPostgresSchema, TEST_POSTGRES_URL, type FreshPostgres } from '../helpers/postgres.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import type { WriteTx } from '../../src/storage/store.js';

/** Ask plans of one session created on two daemons of one PostgreSQL database at the same moment. */
describe.skipIf(!TEST_POSTGRES_URL)('Ask plans across daemons (PostgreSQL)', () => {
  let db: FreshPostgres | undefined;
  let a: TestServer | undefined;
  let b: TestServer | undefined;
  afterEach(async () => {
    for (const s of [b, a]) await s?.close();
    await db?.drop();
    a = b = db = undefined;
  });

  const plan = (id: string, seq: number, text: string) => ({
    method: 'session/event',
    params: { sessionId: 's-1', event: { type: 'plan.proposed', seq, payload: { id, plan: text } } },
  });

  it('an older plan stored on one daemon while a newer one is stored on the other leaves only the newer one pending', async () => {
    db = await freshPostgresSchema();
    a = await startTestServer({ storage: { url: db.url } });
    b = await startTestServer({ storage: { url: db.url } });
    const store = a.server.deps.store;
    const write = store.write.bind(store);
    let newer: Promise<unknown> | undefined;
    // Inside daemon A's write of plan_5, once it has read the session, daemon B stores plan_9.
    store.write = (<T>(fn: (tx: WriteTx) => Promise<T>) =>
      write((tx) => {
        const read = tx.requests.findPendingBySession.bind(tx.requests);
        tx.requests.findPendingBySession = async (...args) => {
          const pending = await read(...args);
          if (!newer) {
            newer = b!.api.post('/v1/formats/ask/requests', plan('plan_9', 9, '1. Deploy to production'));
            await Promise.race([newer, new Promise((resolve) => setTimeout(resolve, 1500))]);
          }
          return pending;
        };
        return fn(tx);
      })) as typeof store.write;
    const older = await a.api.post('/v1/formats/ask/requests', plan('plan_5', 5, '1. Run the tests'));
    expect(newer).toBeDefined();
    const made = (await newer) as { status: number; body: { request: { id: string } } };
    expect(made.status).toBe(201);
    const pending = (await a.api.get('/v1/requests?status=pending')).body.map((r: { dedupe_key: string }) => r.dedupe_key);
    expect(pending, `plan_5 answered ${older.status}`).toEqual(['ask:s-1:plan_9']);
  });
});

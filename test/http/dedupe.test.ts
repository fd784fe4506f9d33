import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { loadFixture } from '../helpers/fixtures.js';
import { parsePrometheusText, sampleValue } from '../helpers/prometheus-text.js';
import { expectValidRequest } from '../helpers/upstream-schemas.js';
import { createRequest, decide, expectError, requestCount } from '../helpers/request-api.js';
import { startTestServer, TEST_STORE, type TestServer } from '../helpers/test-server.js';

const ALP_REQUEST = loadFixture('alp', 'e2e-request.json');

/** Write transactions this daemon has committed or rolled back so far. */
async function transactions(t: TestServer): Promise<number> {
  const res = await t.api.get('/v1/metrics');
  expect(res.status, res.text).toBe(200);
  const m = parsePrometheusText(res.text);
  const count = (outcome: string) => sampleValue(m, 'countersign_store_transaction_seconds_count', { store: TEST_STORE, outcome }) ?? 0;
  return count('commit') + count('rollback');
}

/** handup dedupe_key (docs/api.md): per submitter, only while the first request is pending. */
describe('dedupe_key', () => {
  let t: TestServer;
  afterEach(async () => t?.close());

  const body = { title: 'Send the weekly email', summary: 'draft v1', dedupe_key: 'weekly-email' };

  it('same key and same content: 200 with the same request, nothing new stored', async () => {
    t = await startTestServer();
    const first = await createRequest(t.api, body);
    // Fields outside the content hash (risk, source, timeout) do not make it different content.
    const again = await t.api.post('/v1/requests', { ...body, risk: 'high', source: { agent: 'other' }, timeout: '5m' });
    expect(again.status, again.text).toBe(200);
    expectValidRequest(again.body);
    expect(again.body).toEqual(first);
    expect(Object.keys(again.body).sort()).toEqual(Object.keys(first).sort());
    expect(await requestCount(t.api)).toBe(1);
  });

  it("same content with handup's nested defaults written out or left out is the same content: 200", async () => {
    t = await startTestServer();
    const pairs: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [
        { previews: [{ type: 'command', command: { argv: ['ls'] } }] },
        { previews: [{ type: 'command', command: { argv: ['ls'], cwd: null, env_keys: [], shell: null } }] },
      ],
      [
        { kind: 'question', input: { questions: [{ id: 'q', question: 'Which?', options: [{ label: 'A' }] }] } },
        { kind: 'question', input: { questions: [{ id: 'q', question: 'Which?', options: [{ label: 'A' }], multi: false, allow_free_text: false }] } },
      ],
    ];
    for (const [i, [sent, spelled]] of pairs.entries()) {
      const first = await createRequest(t.api, { title: 'Check', dedupe_key: `k${i}`, ...sent });
      const again = await t.api.post('/v1/requests', { title: 'Check', dedupe_key: `k${i}`, ...spelled });
      expect(again.status, again.text).toBe(200);
      expect(again.body.id).toBe(first.id);
    }
    // A value other than the default is other content.
    const other = { previews: [{ type: 'command', command: { argv: ['ls'], cwd: '/etc' } }] };
    expectError(await t.api.post('/v1/requests', { title: 'Check', dedupe_key: 'k0', ...other }), 409, 'dedupe_conflict');
    expect(await requestCount(t.api)).toBe(2);
  });

  it('same key and different content: 409 dedupe_conflict naming the existing id', async () => {
    t = await startTestServer();
    const first = await createRequest(t.api, body);
    const res = await t.api.post('/v1/requests', { ...body, summary: 'draft v2' });
    expectError(res, 409, 'dedupe_conflict', first.id);
    expect(res.body.details).toEqual({ existing_id: first.id });
    expect(await requestCount(t.api)).toBe(1);
  });

  it.each([
    ['decided', async (t: TestServer, r: any) => expect((await decide(t.api, r, 'approve')).status).toBe(200)],
    ['cancelled', async (t: TestServer, r: any) => expect((await t.api.post(`/v1/requests/${r.id}/cancel`)).status).toBe(200)],
  ])('after the first one is %s the key is free: a new request (201)', async (_state, end) => {
    t = await startTestServer();
    const first = await createRequest(t.api, body);
    await end(t, first);
    const second = await createRequest(t.api, body);
    expect(second.id).not.toBe(first.id);
    expect(second.status).toBe('pending');
    // ...and a different content is no conflict with an ended request either.
    await end(t, second);
    const third = await createRequest(t.api, { ...body, summary: 'draft v3' });
    expect(third.id).not.toBe(second.id);
    expect(await requestCount(t.api)).toBe(3);
  });

  it('is per submitter: two submit tokens (and the admin) with one key get their own requests', async () => {
    t = await startTestServer();
    const a = await t.submitClient('bot-a');
    const b = await t.submitClient('bot-b');
    const ra = await a.api.post('/v1/requests', body);
    const rb = await b.api.post('/v1/requests', body);
    const radmin = await t.api.post('/v1/requests', body);
    for (const r of [ra, rb, radmin]) {
      expect(r.status, r.text).toBe(201);
      expectValidRequest(r.body);
    }
    expect(new Set([ra.body.id, rb.body.id, radmin.body.id]).size).toBe(3);
    // Each token still dedupes against its own.
    const raAgain = await a.api.post('/v1/requests', body);
    expect(raAgain.status).toBe(200);
    expect(raAgain.body.id).toBe(ra.body.id);
    // A conflict is reported only against the caller's own request.
    const conflict = await b.api.post('/v1/requests', { ...body, summary: 'other' });
    expectError(conflict, 409, 'dedupe_conflict', rb.body.id);
    expect(await requestCount(t.api)).toBe(3);
  });

  it('concurrent creates with one key collapse into one request', async () => {
    t = await startTestServer();
    const results = await Promise.all(Array.from({ length: 10 }, () => t.api.post('/v1/requests', body)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 200)).toHaveLength(9);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await requestCount(t.api)).toBe(1);
  });

  it('a replay writes nothing: a dedupe hit, a dedupe conflict and a re-sent native frame open no write transaction', async () => {
    // No heartbeat during the test: the only writes are the requests'.
    t = await startTestServer({ cluster: { heartbeat_interval: '1h' } });
    const first = await createRequest(t.api, body);
    const frame = await t.api.post('/v1/formats/alp/requests', ALP_REQUEST.frame);
    expect(frame.status, frame.text).toBe(201);
    const before = await transactions(t);

    const hit = await t.api.post('/v1/requests', body);
    expect(hit.status, hit.text).toBe(200);
    expect(hit.body).toEqual(first);
    expectError(await t.api.post('/v1/requests', { ...body, summary: 'draft v2' }), 409, 'dedupe_conflict', first.id);
    const replay = await t.api.post('/v1/formats/alp/requests', ALP_REQUEST.frame);
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body).toEqual(frame.body);

    expect(await transactions(t)).toBe(before);
    // A new request still writes.
    await createRequest(t.api, { ...body, dedupe_key: 'another' });
    expect(await transactions(t)).toBe(before + 1);
  });

  it.skipIf(TEST_STORE !== 'sqlite')('while another process holds the SQLite write lock, a dedupe hit is answered and a create is 503', async () => {
    t = await startTestServer({ cluster: { heartbeat_interval: '1h' } });
    const first = await createRequest(t.api, body);
    const other = new Database(join(t.dataDir, 'countersign.db'), { fileMustExist: true });
    try {
      other.exec('BEGIN IMMEDIATE');
      const hit = await t.api.post('/v1/requests', body);
      expect(hit.status, hit.text).toBe(200);
      expect(hit.body.id).toBe(first.id);
      // The create waits out the busy timeout, then says the database is unavailable, not "internal error".
      const blocked = await t.api.post('/v1/requests', { ...body, dedupe_key: 'another' });
      expectError(blocked, 503, 'storage_unavailable', 'locked by another process');
      other.exec('ROLLBACK');
      expect(await requestCount(t.api)).toBe(1);
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
  });

  it('requests without a dedupe_key never collapse', async () => {
    t = await startTestServer();
    const one = await createRequest(t.api, { title: 'same' });
    const two = await createRequest(t.api, { title: 'same' });
    expect(one.id).not.toBe(two.id);
  });
});

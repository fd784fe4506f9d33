import { afterEach, describe, expect, it } from 'vitest';
import { expectValidRequest } from '../helpers/upstream-schemas.js';
import { createRequest, decide, expectError, requestCount } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

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

  it('requests without a dedupe_key never collapse', async () => {
    t = await startTestServer();
    const one = await createRequest(t.api, { title: 'same' });
    const two = await createRequest(t.api, { title: 'same' });
    expect(one.id).not.toBe(two.id);
  });
});

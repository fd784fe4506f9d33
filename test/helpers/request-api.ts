import { expect } from 'vitest';
import { expectValidRequest } from './upstream-schemas.js';
import type { ApiClient, ApiResponse } from './test-server.js';

/** Small assertions for driving the request API in tests; every served Request is schema-checked. */

/** POST /v1/requests that must answer 201 with a valid Request. */
export async function createRequest(api: ApiClient, body: Record<string, unknown>): Promise<any> {
  const res = await api.post('/v1/requests', body);
  expect(res.status, res.text).toBe(201);
  expectValidRequest(res.body);
  return res.body;
}

/** POST /v1/requests/{id}/decision echoing the record's hash; a 200 body must be a valid Request. */
export async function decide(api: ApiClient, record: { id: string; content_hash: string }, option: string, extra: Record<string, unknown> = {}) {
  const res = await api.post(`/v1/requests/${record.id}/decision`, { option, content_hash: record.content_hash, ...extra });
  if (res.status === 200) expectValidRequest(res.body);
  return res;
}

/** GET /v1/requests/{id} with the admin client; must be 200 and valid. */
export async function show(api: ApiClient, id: string): Promise<any> {
  const res = await api.get(`/v1/requests/${id}`);
  expect(res.status, res.text).toBe(200);
  expectValidRequest(res.body);
  return res.body;
}

/** Every stored request, counted through the admin list (max page). */
export async function requestCount(api: ApiClient): Promise<number> {
  const res = await api.get('/v1/requests?limit=500');
  expect(res.status, res.text).toBe(200);
  return (res.body as unknown[]).length;
}

/** The error body contract: `{error, code, details?}` with the given status and code. */
export function expectError(res: ApiResponse, status: number, code: string, messageIncludes?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body, res.text).toMatchObject({ code, error: expect.any(String) });
  expect(
    Object.keys(res.body).every((k) => ['error', 'code', 'details'].includes(k)),
    res.text,
  ).toBe(true);
  if (messageIncludes !== undefined) expect(res.body.error).toContain(messageIncludes);
}

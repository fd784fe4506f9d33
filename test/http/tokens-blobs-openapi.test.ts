import { randomBytes } from 'node:crypto';
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createRequest, expectError } from '../helpers/request-api.js';
import { createApiClient, startTestServer, TEST_STORE, type TestServer } from '../helpers/test-server.js';

describe('tokens', () => {
  let t: TestServer;
  afterEach(async () => t?.close());

  it('creates a token (201, secret shown once), lists without secrets, revokes', async () => {
    t = await startTestServer();
    const created = await t.api.post('/v1/tokens', { name: 'ci-bot' });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({ name: 'ci-bot', token: expect.any(String), created_at: expect.any(Number), expires_at: null, grants: [] });
    expect(created.body.token.length).toBeGreaterThanOrEqual(32);
    const withExpiry = await t.api.post('/v1/tokens', { name: 'short-lived', expires: '90d' });
    expect(withExpiry.status).toBe(201);
    expect(withExpiry.body.expires_at).toBe(withExpiry.body.created_at + 90 * 86_400_000);

    const listed = await t.api.get('/v1/tokens');
    expect(listed.status).toBe(200);
    expect(listed.body.map((x: any) => x.name)).toEqual(['ci-bot', 'short-lived']);
    expect(listed.text).not.toContain(created.body.token);
    expect(listed.text).not.toContain(withExpiry.body.token);
    for (const x of listed.body) expect(x).not.toHaveProperty('token');

    // The secret works, is never shown again, and is not stored in the clear.
    expect((await createApiClient(t.url, created.body.token).post('/v1/requests', { title: 'x' })).status).toBe(201);
    const stored = await t.sql('SELECT * FROM tokens');
    expect(JSON.stringify(stored)).not.toContain(created.body.token);

    const revoked = await t.api.delete('/v1/tokens/ci-bot');
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toMatchObject({ name: 'ci-bot', revoked_at: expect.any(Number) });
    expect(revoked.body).not.toHaveProperty('token');
    expect((await t.api.get('/v1/tokens')).body.map((x: any) => x.name)).toEqual(['short-lived']);
    expectError(await t.api.delete('/v1/tokens/ci-bot'), 404, 'not_found', 'ci-bot');
  });

  it('409 for a live duplicate name; the name is free again after revoke', async () => {
    t = await startTestServer();
    expect((await t.api.post('/v1/tokens', { name: 'dup' })).status).toBe(201);
    expectError(await t.api.post('/v1/tokens', { name: 'dup' }), 409, 'token_exists', 'dup');
    expect((await t.api.get('/v1/tokens')).body).toHaveLength(1);
    expect((await t.api.delete('/v1/tokens/dup')).status).toBe(200);
    expect((await t.api.post('/v1/tokens', { name: 'dup' })).status).toBe(201);
  });

  it('creates racing for one name: one 201, every other 409 token_exists, never a 500', async () => {
    t = await startTestServer();
    const answers = await Promise.all(Array.from({ length: 8 }, () => t.api.post('/v1/tokens', { name: 'race' })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    for (const a of answers.filter((x) => x.status === 409)) expectError(a, 409, 'token_exists', 'race');
    expect((await t.api.get('/v1/tokens')).body).toHaveLength(1);
  });

  it.each([['CI'], ['has space'], ['a'.repeat(41)], [''], ['under_score']])('400 for the bad name %j, nothing stored', async (name) => {
    t = await startTestServer();
    expectError(await t.api.post('/v1/tokens', { name }), 400, 'invalid_request', 'name');
    expect((await t.api.get('/v1/tokens')).body).toEqual([]);
  });

  it('404 for revoking an unknown token', async () => {
    t = await startTestServer();
    expectError(await t.api.delete('/v1/tokens/nobody'), 404, 'not_found');
  });

  it('GET /v1/tokens/{name} shows one live token without its secret; 404 once revoked or unknown; admin only', async () => {
    t = await startTestServer();
    const created = await t.api.post('/v1/tokens', { name: 'ci', grants: ['timeout_approve'] });
    const shown = await t.api.get('/v1/tokens/ci');
    expect(shown.status, shown.text).toBe(200);
    expect(shown.body).toEqual({ name: 'ci', created_at: created.body.created_at, expires_at: null, last_used_at: null, grants: ['timeout_approve'] });
    expect(JSON.stringify(shown.body)).not.toContain(created.body.token);
    expectError(await t.api.request('GET', '/v1/tokens/ci', undefined, { token: created.body.token }), 403, 'forbidden');
    await t.api.delete('/v1/tokens/ci');
    expectError(await t.api.get('/v1/tokens/ci'), 404, 'not_found');
    expectError(await t.api.get('/v1/tokens/Not_A_Name'), 400, 'invalid_request', 'name');
  });
});

describe('blobs', () => {
  let t: TestServer;
  afterEach(async () => t?.close());

  async function upload(bytes: Buffer, contentType = 'application/octet-stream') {
    return t.api.request('POST', '/v1/blobs', undefined, { raw: bytes, headers: { 'content-type': contentType } });
  }

  it('uploads bytes (201 text/plain sha256:<hex>) and downloads the same bytes', async () => {
    t = await startTestServer();
    const bytes = randomBytes(100_000);
    const hash = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    const res = await upload(bytes);
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toBe(hash);

    const down = await fetch(`${t.url}/v1/blobs/${hash}`, { headers: { authorization: `Bearer ${t.adminToken}` } });
    expect(down.status).toBe(200);
    expect(Buffer.from(await down.arrayBuffer()).equals(bytes)).toBe(true);
    expect(down.headers.get('x-content-type-options')).toBe('nosniff');
    expect(down.headers.get('content-security-policy')).toContain('sandbox');

    // Same bytes, any content type: same hash, stored once.
    const again = await upload(bytes, 'image/png');
    expect(again.status).toBe(201);
    expect(again.text).toBe(hash);
    expect(await t.count('blobs')).toBe(1);

    // A request may reference the blob by that hash.
    const r = await createRequest(t.api, { title: 'see file', previews: [{ type: 'file', blob: hash, name: 'data.bin' }] });
    expect(r.previews[0].blob).toBe(hash);
  });

  it('uploads of the same bytes at once: every one 201 with the hash, one copy stored, never a 500', async () => {
    t = await startTestServer();
    const bytes = randomBytes(100);
    const hash = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    const answers = await Promise.all(Array.from({ length: 8 }, () => upload(bytes)));
    expect(answers.map((a) => [a.status, a.text])).toEqual(Array.from({ length: 8 }, () => [201, hash]));
    expect(await t.count('blobs')).toBe(1);
    const down = await fetch(`${t.url}/v1/blobs/${hash}`, { headers: { authorization: `Bearer ${t.adminToken}` } });
    expect(Buffer.from(await down.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('accepts a JSON upload as bytes too', async () => {
    t = await startTestServer();
    const text = '{"a": 1}';
    const res = await upload(Buffer.from(text), 'application/json');
    expect(res.status).toBe(201);
    const down = await fetch(`${t.url}/v1/blobs/${res.text}`, { headers: { authorization: `Bearer ${t.adminToken}` } });
    expect(await down.text()).toBe(text);
  });

  it('404 for a blob that was never uploaded', async () => {
    t = await startTestServer();
    expectError(await t.api.get(`/v1/blobs/sha256:${'0'.repeat(64)}`), 404, 'not_found');
  });

  it('413 for an upload over the blob limit', async () => {
    t = await startTestServer();
    // The message names the blob limit, not requests.max_body_bytes (which does not apply here).
    const res = await upload(Buffer.alloc(16 * 1024 * 1024 + 1));
    expectError(res, 413, 'payload_too_large', String(16 * 1024 * 1024));
    expect(res.body.error).not.toContain('max_body_bytes');
    expect(await t.count('blobs')).toBe(0);
  });
});

describe('openapi and health', () => {
  let t: TestServer;
  afterEach(async () => t?.close());

  it('GET /v1/openapi.json is an OpenAPI 3 document listing the /v1 paths', async () => {
    t = await startTestServer();
    const res = await t.api.get('/v1/openapi.json');
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info).toMatchObject({ title: 'countersign', version: expect.any(String) });
    const paths = Object.keys(doc.paths);
    for (const p of [
      '/v1/health',
      '/v1/requests',
      '/v1/requests/{id}',
      '/v1/requests/{id}/wait',
      '/v1/requests/{id}/decision',
      '/v1/requests/{id}/cancel',
      '/v1/requests/{id}/audit',
      '/v1/history',
      '/v1/blobs',
      '/v1/blobs/{hash}',
      '/v1/tokens',
      '/v1/tokens/{name}',
    ]) {
      expect(paths, p).toContain(p);
    }
    expect(Object.keys(doc.paths['/v1/requests'])).toEqual(expect.arrayContaining(['get', 'post']));
    // The create body is documented from the zod schema (a shared component): title is required.
    const create = doc.paths['/v1/requests'].post;
    const ref: string = create.requestBody.content['application/json'].schema.$ref;
    expect(doc.components.schemas[ref.split('/').pop()!].required).toContain('title');
    // Query filters are documented.
    expect(doc.paths['/v1/requests'].get.parameters.map((p: any) => p.name)).toEqual(
      expect.arrayContaining(['status', 'kind', 'format', 'agent', 'session', 'limit']),
    );
  });

  it('GET /v1/health answers {status: "ok", version, store} without a token', async () => {
    t = await startTestServer();
    const res = await fetch(`${t.url}/v1/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', version: t.server.deps.version, store: TEST_STORE });
  });

  it('GET /v1/cluster lists this daemon (admin only)', async () => {
    t = await startTestServer();
    const res = await t.api.get('/v1/cluster');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      store: TEST_STORE,
      nodes: [{ id: t.server.deps.cluster.id, version: t.server.deps.version, started_at: expect.any(Number), last_seen: expect.any(Number), self: true }],
    });
    const { api } = await t.submitClient('agent');
    expect((await api.get('/v1/cluster')).status).toBe(403);
  });

  it('unknown routes are 404 not_found in the error shape', async () => {
    t = await startTestServer();
    expectError(await t.api.get('/v1/nothing-here'), 404, 'not_found');
    expectError(await t.api.get('/v1/nothing-here', { token: null }), 404, 'not_found');
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { expectValidRequest } from './helpers/upstream-schemas.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

describe('smoke', () => {
  let t: TestServer;
  afterEach(async () => t?.close());

  it('creates, decides and serves a schema-valid request on a real port', async () => {
    t = await startTestServer();
    const created = await t.api.post('/v1/requests', { title: 'Deploy staging' });
    expect(created.status).toBe(201);
    expectValidRequest(created.body);
    const decided = await t.api.post(`/v1/requests/${created.body.id}/decision`, { option: 'approve', content_hash: created.body.content_hash });
    expect(decided.status).toBe(200);
    expect(decided.body.status).toBe('approved');
    expectValidRequest(decided.body);
  });
});

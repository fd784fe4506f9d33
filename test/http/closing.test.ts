import inject from 'light-my-request';
import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/test-server.js';

/** A call that reaches the daemon while it shuts down gets the one error shape, naming why. */
describe('shutting down', () => {
  it('answers a call routed while closing with 503 shutting_down, not a body of its own', async () => {
    const t = await startTestServer();
    await t.close();
    // What a call on a keep-alive connection meets once the shutdown has begun: the closing
    // router, reached here without a socket.
    const res = await inject(t.server.app.routing, {
      method: 'GET',
      url: '/v1/requests',
      headers: { authorization: `Bearer ${t.adminToken}`, host: new URL(t.url).host, 'x-request-id': 'myid-7' },
    });
    expect(res.statusCode).toBe(503);
    expect(res.headers['x-request-id']).toBe('myid-7');
    expect(res.json()).toEqual({ error: 'countersign is shutting down: try again in a moment', code: 'shutting_down' });
    expect(res.headers.connection).toBe('close');
    // Under a foreign name, the Host check answers first, as on any other call.
    const foreign = await inject(t.server.app.routing, { method: 'GET', url: '/v1/requests', headers: { host: 'evil.example' } });
    expect(foreign.statusCode).toBe(421);
  });
});

import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inProcessCli } from '../helpers/cli-harness.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

describe('countersign CLI: tokens', { timeout: 60_000 }, () => {
  let t: TestServer;
  let cli: ReturnType<typeof inProcessCli>;
  beforeEach(async () => {
    t = await startTestServer();
    cli = inProcessCli({ env: { COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: t.adminToken } });
  });
  afterEach(async () => t?.close());

  it('create, list, use, revoke', async () => {
    const created = await cli(['tokens', 'create', 'ci-bot', '--expires', '90d', '--json']);
    expect(created.code).toBe(0);
    const info = JSON.parse(created.stdout);
    expect(info).toMatchObject({ name: 'ci-bot', token: expect.stringMatching(/^cst_/) });
    expect(info.expires_at - info.created_at).toBe(90 * 86_400_000);

    const human = await cli(['tokens', 'create', 'second-bot']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^name: {4}second-bot\ntoken: {3}cst_\S+\nexpires: never\nThe token is shown only this once/);

    const list = await cli(['tokens', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^NAME\s+CREATED\s+EXPIRES\s+LAST USED\s+GRANTS$/);
    expect(list.stdout).toMatch(/^ci-bot\s.*\s-$/m);
    expect(list.stdout).toContain('second-bot');
    expect(list.stdout).not.toContain(info.token);

    // The submit token can create and see its own requests, but not list everyone's.
    const asBot = inProcessCli({ env: { COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: info.token } });
    const ask = await asBot(['ask', '--title', 'From CI', '--json']);
    expect(ask.code).toBe(0);
    const request = JSON.parse(ask.stdout);
    expect(request.source.integration).toBe('ci-bot');
    expect((await asBot(['show', request.id])).code).toBe(0);
    const forbidden = await asBot(['ls']);
    expect(forbidden.code).toBe(4);
    expect(forbidden.stderr).toMatch(/^countersign: forbidden: /);

    const revoked = await cli(['tokens', 'revoke', 'ci-bot']);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toBe('revoked ci-bot\n');
    const listJson = JSON.parse((await cli(['tokens', 'list', '--json'])).stdout);
    expect(listJson.map((x: any) => x.name)).toEqual(['second-bot']);

    const after = await asBot(['show', request.id]);
    expect(after.code).toBe(4);
    expect(after.stderr).toMatch(/^countersign: unauthorized: /);
  });

  it('errors: a bad name, a duplicate, revoking an unknown token', async () => {
    const bad = await cli(['tokens', 'create', 'Bad_Name']);
    expect(bad.code).toBe(4);
    expect(bad.stderr).toMatch(/^countersign: invalid_request: name: /);
    expect((await cli(['tokens', 'create', 'dup'])).code).toBe(0);
    const dup = await cli(['tokens', 'create', 'dup']);
    expect(dup.code).toBe(4);
    expect(dup.stderr).toMatch(/^countersign: token_exists: /);
    const unknown = await cli(['tokens', 'revoke', 'nobody-here']);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toMatch(/^countersign: not_found: /);
    const expires = await cli(['tokens', 'create', 'later', '--expires', 'soon']);
    expect(expires.code).toBe(4);
    expect(expires.stderr).toMatch(/^countersign: invalid_request: expires: /);
    expect(JSON.parse((await cli(['tokens', 'list', '--json'])).stdout).map((x: any) => x.name)).toEqual(['dup']);
  });
});

/**
 * `--grant` sends `grants` in POST /v1/tokens and `tokens list` shows them. The daemon side
 * (validation, storage, what a grant allows) is tested with the routes; here a server records
 * what the CLI sends and answers as a daemon with grants does.
 */
describe('countersign CLI: tokens create --grant', () => {
  let server: Server;
  let url: string;
  const received: unknown[] = [];
  beforeEach(async () => {
    received.length = 0;
    server = createServer((req, res) => {
      let body = '';
      req
        .on('data', (c) => (body += c))
        .on('end', () => {
          res.setHeader('content-type', 'application/json');
          if (req.method === 'POST' && req.url === '/v1/tokens') {
            const sent = JSON.parse(body);
            received.push(sent);
            res.statusCode = 201;
            return void res.end(JSON.stringify({ name: sent.name, token: 'cst_secret', created_at: 0, expires_at: null, grants: sent.grants ?? [] }));
          }
          res.end(
            JSON.stringify([
              { name: 'bridge', created_at: 0, expires_at: null, last_used_at: null, grants: ['resolve_upstream', 'timeout_approve'] },
              { name: 'plain', created_at: 0, expires_at: null, last_used_at: null, grants: [] },
            ]),
          );
        });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends every --grant, and no grants field without one', async () => {
    const cli = inProcessCli({ env: { COUNTERSIGN_URL: url, COUNTERSIGN_TOKEN: 'admin-token-for-the-test' } });
    const made = await cli(['tokens', 'create', 'bridge', '--grant', 'resolve_upstream', '--grant', 'timeout_approve']);
    expect(made.code).toBe(0);
    expect(made.stdout).toContain('grants:  resolve_upstream,timeout_approve\n');
    expect((await cli(['tokens', 'create', 'plain'])).stdout).not.toContain('grants:');
    expect(received).toEqual([{ name: 'bridge', grants: ['resolve_upstream', 'timeout_approve'] }, { name: 'plain' }]);

    const list = await cli(['tokens', 'list']);
    expect(list.stdout).toMatch(/^bridge\s.*\sresolve_upstream,timeout_approve$/m);
    expect(list.stdout).toMatch(/^plain\s.*\s-$/m);
  });
});

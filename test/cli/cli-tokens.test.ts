import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

describe('countersign CLI: tokens', { timeout: 120_000 }, () => {
  let t: TestServer;
  let env: Record<string, string>;
  beforeEach(async () => {
    t = await startTestServer();
    env = { COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: t.adminToken };
  });
  afterEach(async () => t?.close());

  it('create, list, use, revoke', async () => {
    const created = await runCli(['tokens', 'create', 'ci-bot', '--expires', '90d', '--json'], { env });
    expect(created.code).toBe(0);
    const info = JSON.parse(created.stdout);
    expect(info).toMatchObject({ name: 'ci-bot', token: expect.stringMatching(/^cst_/) });
    expect(info.expires_at - info.created_at).toBe(90 * 86_400_000);

    const human = await runCli(['tokens', 'create', 'second-bot'], { env });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^name: {4}second-bot\ntoken: {3}cst_\S+\nexpires: never\n/);

    const list = await runCli(['tokens', 'list'], { env });
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^NAME\s+CREATED\s+EXPIRES\s+LAST USED$/);
    expect(list.stdout).toContain('ci-bot');
    expect(list.stdout).toContain('second-bot');
    expect(list.stdout).not.toContain(info.token);

    // The submit token can create and see its own requests, but not list everyone's.
    const asBot = { COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: info.token };
    const ask = await runCli(['ask', '--title', 'From CI', '--json'], { env: asBot });
    expect(ask.code).toBe(0);
    const request = JSON.parse(ask.stdout);
    expect(request.source.integration).toBe('ci-bot');
    expect((await runCli(['show', request.id], { env: asBot })).code).toBe(0);
    const forbidden = await runCli(['ls'], { env: asBot });
    expect(forbidden.code).toBe(4);
    expect(forbidden.stderr).toMatch(/^countersign: forbidden: /);

    const revoked = await runCli(['tokens', 'revoke', 'ci-bot'], { env });
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toBe('revoked ci-bot\n');
    const listJson = JSON.parse((await runCli(['tokens', 'list', '--json'], { env })).stdout);
    expect(listJson.map((x: any) => x.name)).toEqual(['second-bot']);

    const after = await runCli(['show', request.id], { env: asBot });
    expect(after.code).toBe(4);
    expect(after.stderr).toMatch(/^countersign: unauthorized: /);
  });

  it('errors: a bad name, a duplicate, revoking an unknown token', async () => {
    const bad = await runCli(['tokens', 'create', 'Bad_Name'], { env });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toMatch(/^countersign: invalid_request: name: /);
    expect((await runCli(['tokens', 'create', 'dup'], { env })).code).toBe(0);
    const dup = await runCli(['tokens', 'create', 'dup'], { env });
    expect(dup.code).toBe(4);
    expect(dup.stderr).toMatch(/^countersign: token_exists: /);
    const unknown = await runCli(['tokens', 'revoke', 'nobody-here'], { env });
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toMatch(/^countersign: not_found: /);
    const expires = await runCli(['tokens', 'create', 'later', '--expires', 'soon'], { env });
    expect(expires.code).toBe(4);
    expect(expires.stderr).toMatch(/^countersign: invalid_request: expires: /);
    expect(JSON.parse((await runCli(['tokens', 'list', '--json'], { env })).stdout).map((x: any) => x.name)).toEqual(['dup']);
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../callbacks/callback-kit.js';
import { runCli } from '../helpers/cli-process.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { withHooks } from '../notify/notify-kit.js';

describe('countersign CLI: hooks, mute, unmute, links', { timeout: 120_000 }, () => {
  let t: TestServer;
  let receiver: Receiver;
  let env: Record<string, string>;
  beforeEach(async () => {
    receiver = await startReceiver((n) => ({ status: n === 1 ? 200 : 503 }));
    t = await startTestServer(withHooks([{ name: 'team', webhook: `${receiver.url}/hook`, format: 'slack' }]));
    env = { COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: t.adminToken };
  });
  afterEach(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('hooks list and hooks test (exit 4 when the receiver fails)', async () => {
    const list = await runCli(['hooks', 'list'], { env });
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^NAME\s+KIND\s+FORMAT\s+TARGET\s+LAST DELIVERY$/);
    expect(list.stdout).toMatch(/team\s+webhook\s+slack\s+http:\/\/127\.0\.0\.1:\d+\/…\s+-/);
    const ok = await runCli(['hooks', 'test', 'team', '--event', 'request.decided'], { env });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^sent request\.decided to team: status 200 in \d+ ms\n$/);
    const failed = await runCli(['hooks', 'test', 'team'], { env });
    expect(failed.code).toBe(4);
    expect(failed.stderr).toBe('countersign: hook_failed: team: HTTP 503\n');
    const unknown = await runCli(['hooks', 'test', 'nope'], { env });
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain('not_found');
    expect((await runCli(['hooks'], { env })).code).toBe(4);
  });

  it('mute, mute list, unmute', async () => {
    const muted = await runCli(['mute', '--agent', 'codex', '--for', '1h', '--dismiss-notices', '--json'], { env });
    expect(muted.code, muted.stderr).toBe(0);
    const mute = JSON.parse(muted.stdout);
    expect(mute).toMatchObject({ agent: 'codex', session: null, dismiss_notices: true });
    expect(mute.expires_at - mute.created_at).toBe(3_600_000);
    const list = await runCli(['mute', 'list'], { env });
    expect(list.stdout).toContain(mute.id);
    expect(list.stdout).toContain('agent codex');
    const un = await runCli(['unmute', mute.id], { env });
    expect(un.code).toBe(0);
    expect(un.stdout).toBe('unmuted agent codex\n');
    expect((await runCli(['mute', 'list'], { env })).stdout).toBe('no mutes\n');
    const nothing = await runCli(['mute'], { env });
    expect(nothing.code).toBe(4);
    expect(nothing.stderr).toContain('usage');
    const bad = await runCli(['mute', '--agent', 'x', '--for', 'ever'], { env });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toContain('for');
    expect(await t.count('mutes')).toBe(0);
  });

  it('links rotate', async () => {
    const res = await runCli(['links', 'rotate'], { env });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^decision-link key rotated at \S+: every link sent before is revoked\n$/);
    expect((await runCli(['links'], { env })).code).toBe(4);
  });
});

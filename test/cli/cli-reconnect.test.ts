import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RECONNECT_GRACE_MS } from '../../src/cli/wait-command.js';
import { inProcessCli } from '../helpers/cli-harness.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * `wait` and `ask --wait` ride out a daemon restart: the daemon stops (answering the open
 * long-poll, then refusing connections), starts again on the same port and database, and the
 * command carries on to the decision instead of exiting 4.
 */
describe('wait and ask --wait across a daemon restart', { timeout: 60_000 }, () => {
  const servers: TestServer[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** A daemon whose data outlives it, and a way to start it again on the same port. */
  async function restartableDaemon() {
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-reconnect-'));
    dirs.push(dataDir);
    const first = await startTestServer({ data_dir: dataDir });
    servers.push(first);
    const port = Number(new URL(first.url).port);
    return {
      first,
      again: async () => {
        const s = await startTestServer({ data_dir: dataDir, port });
        servers.push(s);
        return s;
      },
    };
  }

  /** Hooks into the command: when its long-poll is on the wire, and when it starts backing off. */
  function observedCli(url: string, token: string, now?: () => number) {
    let onLongPoll!: () => void;
    const longPollSent = new Promise<void>((resolve) => (onLongPoll = resolve));
    let onBackOff!: () => void;
    const backingOff = new Promise<void>((resolve) => (onBackOff = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const pauses: number[] = [];
    const cli = inProcessCli({
      env: { COUNTERSIGN_URL: url, COUNTERSIGN_TOKEN: token },
      fetch: (input, init) => {
        if (String(input).includes('/wait?')) onLongPoll();
        return fetch(input, init);
      },
      // Every pause waits until the test has restarted the daemon: no timing involved.
      sleep: async (ms) => {
        pauses.push(ms);
        onBackOff();
        await released;
      },
      ...(now ? { now } : {}),
    });
    return { cli, longPollSent, backingOff, release, pauses };
  }

  it.each([
    ['wait', (id: string) => ['wait', id, '--json']],
    ['ask --wait', () => ['ask', '--title', 'Across a restart', '--wait', '--json']],
  ] as const)('%s: the daemon restarts mid-wait, the command waits for it and exits with the decision', async (name, argv) => {
    const { first, again } = await restartableDaemon();
    // No deadline: the command has no reason to give up while the daemon is away.
    const existing = name === 'wait' ? (await first.api.post('/v1/requests', { title: 'Across a restart', timeout: null })).body : null;
    const o = observedCli(first.url, first.adminToken);
    const running = o.cli(argv(existing?.id ?? ''));
    await o.longPollSent;

    await first.close();
    await o.backingOff;
    const second = await again();
    o.release();

    const [pending] = (await second.api.get('/v1/requests?status=pending')).body;
    expect(pending.title).toBe('Across a restart');
    const decided = await second.api.post(`/v1/requests/${pending.id}/decision`, { option: 'approve', content_hash: pending.content_hash });
    expect(decided.status).toBe(200);

    const r = await running;
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: pending.id, status: 'approved', option: 'approve' });
    // One line when the daemon went away, nothing per attempt.
    const lines = r.stderr
      .trimEnd()
      .split('\n')
      .filter((l) => l.includes('retrying'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^countersign: unreachable: .*; retrying until the daemon is back$/);
    expect(o.pauses[0]).toBe(250);
  });

  it("gives up (exit 4) once the request's deadline is more than the grace period past and the daemon is still away", async () => {
    const { first } = await restartableDaemon();
    const created = (await first.api.post('/v1/requests', { title: 'Short-lived', timeout: '10m' })).body;
    // The command's clock says the deadline passed long ago.
    const o = observedCli(first.url, first.adminToken, () => created.expires_at + RECONNECT_GRACE_MS + 1);
    const running = o.cli(['wait', created.id]);
    await o.longPollSent;
    await first.close();
    const r = await running;
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^countersign: unreachable: .*; gave up 60s after the request's deadline\n$/);
    expect(o.pauses).toEqual([]);
  });

  it('backs off 250 ms, doubling to at most 5 s, while the daemon stays away', async () => {
    const { first } = await restartableDaemon();
    const created = (await first.api.post('/v1/requests', { title: 'Long outage', timeout: null })).body;
    const pauses: number[] = [];
    let stop!: () => void;
    const enough = new Promise<void>((resolve) => (stop = resolve));
    let onLongPoll!: () => void;
    const longPollSent = new Promise<void>((resolve) => (onLongPoll = resolve));
    const cli = inProcessCli({
      env: { COUNTERSIGN_URL: first.url, COUNTERSIGN_TOKEN: first.adminToken },
      fetch: (input, init) => {
        if (String(input).includes('/wait?')) onLongPoll();
        return fetch(input, init);
      },
      sleep: async (ms) => {
        pauses.push(ms);
        if (pauses.length === 8) {
          stop();
          await new Promise(() => undefined); // parks the command: the test has seen enough
        }
      },
    });
    void cli(['wait', created.id]);
    await longPollSent;
    await first.close();
    await enough;
    expect(pauses).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
  });
});

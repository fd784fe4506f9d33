import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../callbacks/callback-kit.js';
import { createFakeClock } from '../helpers/fake-clock.js';
import { createRequest } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { COMMAND, settledAll, waitForHookDeliveries, withHooks } from './notify-kit.js';

/** A program that records its stdin, argv and environment, and exits with the status its run number asks for. */
const PROGRAM = `
const fs = require('node:fs');
const path = require('node:path');
const [out, ...statuses] = process.argv.slice(2);
let input = '';
process.stdin.on('data', (c) => (input += c));
process.stdin.on('end', () => {
  const n = fs.readdirSync(out).length + 1;
  fs.writeFileSync(path.join(out, n + '.json'), JSON.stringify({ input, env: process.env }));
  process.exit(Number(statuses[n - 1] ?? 0));
});
`;

describe('exec hooks and durable hook delivery', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function programDir() {
    const dir = mkdtempSync(join(tmpdir(), 'countersign-exec-'));
    const out = join(dir, 'runs');
    mkdirSync(out);
    writeFileSync(join(dir, 'program.cjs'), PROGRAM);
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return {
      script: join(dir, 'program.cjs'),
      out,
      runs: () =>
        readdirSync(out)
          .sort()
          .map((f) => JSON.parse(readFileSync(join(out, f), 'utf8'))),
    };
  }

  it('runs the program with the envelope on stdin, no shell, without the daemon secrets; a non-zero exit is retried on schedule', async () => {
    const { script, out, runs } = programDir();
    const clock = createFakeClock(Date.now());
    process.env.COUNTERSIGN_PROBE_SECRET = 'must-not-leak';
    cleanups.push(() => void delete process.env.COUNTERSIGN_PROBE_SECRET);
    // `;` and `$(...)` are plain arguments: no shell ever sees them.
    const t: TestServer = await startTestServer(
      withHooks([{ name: 'desktop', exec: [process.execPath, script, out, '3', '0', '; echo $(id)'], events: ['request.created'] }]),
      { clock, callbacks: { random: () => 0.5 } },
    );
    cleanups.push(() => t.close());
    const r = await createRequest(t.api, COMMAND);
    let [d] = await waitForHookDeliveries(t.api, 'desktop', (list) => list[0]?.state === 'pending' && list[0].last_error !== null);
    expect(d).toMatchObject({ type: 'request.created', url: `exec:${process.execPath}`, last_error: 'the program exited with status 3' });
    expect(d.attempts[0]).toMatchObject({ n: 1, status: 3, error_class: 'exit_status' });
    expect(d.next_attempt_at).toBe(r.created_at + 5_000);

    clock.advance(5_000);
    [d] = await waitForHookDeliveries(t.api, 'desktop', settledAll);
    expect(d.state).toBe('delivered');
    expect(d.attempts.map((a: any) => [a.n, a.status, a.error_class])).toEqual([
      [1, 3, 'exit_status'],
      [2, 0, null],
    ]);

    const [first, second] = runs();
    const envelope = JSON.parse(first.input);
    expect(envelope).toMatchObject({ v: 1, type: 'request.created', id: d.id, data: { request: { id: r.id, title: 'Deploy staging' } } });
    expect(second.input).toBe(first.input);
    expect(first.env).toMatchObject({
      COUNTERSIGN_HOOK: 'desktop',
      COUNTERSIGN_EVENT: 'request.created',
      COUNTERSIGN_EVENT_ID: d.id,
      COUNTERSIGN_REQUEST_ID: r.id,
    });
    expect(first.env.PATH).toBe(process.env.PATH);
    expect(first.env.COUNTERSIGN_PROBE_SECRET).toBeUndefined();
    expect(JSON.stringify(first)).not.toContain(t.adminToken);
  });

  it('an exec hook that outlives its timeout is killed and the attempt fails as a timeout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'countersign-exec-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const script = join(dir, 'sleep.cjs');
    writeFileSync(script, 'setInterval(() => {}, 1000);');
    const t = await startTestServer(withHooks([{ name: 'slow', exec: [process.execPath, script], timeout: '300ms' }]), { callbacks: { random: () => 0.5 } });
    cleanups.push(() => t.close());
    await createRequest(t.api, COMMAND);
    const [d] = await waitForHookDeliveries(t.api, 'slow', (list) => list[0]?.attempts[0]?.error_class != null);
    expect(d.attempts[0]).toMatchObject({ error_class: 'timeout', status: null });
  });

  it('a queued hook delivery survives a restart and is retried with the same event id', async () => {
    const receiver: Receiver = await startReceiver((n) => ({ status: n === 1 ? 503 : 200 }));
    cleanups.push(() => receiver.close());
    const start = Math.floor(Date.now() / 1000) * 1000;
    const overrides = withHooks([{ name: 'sink', webhook: `${receiver.url}/sink`, format: 'json' }]);
    const first = await startTestServer(overrides, { clock: createFakeClock(start), callbacks: { random: () => 0.5 } });
    const dataDir = first.dataDir;
    const r = await createRequest(first.api, COMMAND);
    await receiver.waitFor(1);
    const [pending] = await waitForHookDeliveries(first.api, 'sink', (list) => list[0]?.state === 'pending' && list[0].last_error !== null);
    expect(pending.next_attempt_at).toBe(r.created_at + 5_000);
    await first.server.close();

    // The next start, 5 s later: the row is due and goes out from the outbox.
    const second = await startTestServer({ ...overrides, data_dir: dataDir }, { clock: createFakeClock(start + 5_000), callbacks: { random: () => 0.5 } });
    cleanups.push(async () => {
      await second.close();
      await first.close();
    });
    const received = await receiver.waitFor(2);
    const [done] = await waitForHookDeliveries(second.api, 'sink', settledAll);
    expect(done).toMatchObject({ id: pending.id, state: 'delivered' });
    expect(done.attempts.map((a: any) => a.status)).toEqual([503, 200]);
    expect(received.map((x) => x.headers['webhook-id'])).toEqual([pending.id, pending.id]);
    expect(received[1]!.body).toBe(received[0]!.body);
  });
});

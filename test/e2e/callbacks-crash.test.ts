import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SECRET,
  auditOf,
  createWithCallback,
  decideRequest,
  startReceiver,
  waitForDeliveries,
  type ReceivedCallback,
  type Receiver,
} from '../callbacks/callback-kit.js';
import { CLI_PATH, cleanEnv } from '../helpers/cli-process.js';
import { ADMIN_TOKEN, createApiClient, type ApiClient } from '../helpers/test-server.js';

/**
 * kill -9 against the real daemon (`node dist/cli.js serve`; build first with
 * `npx tsc -p tsconfig.json`). The outbox row is committed with the decision, so a delivery
 * cut off mid-flight, or waiting for its retry, is made after a restart on the same data dir,
 * with the same webhook-id, and the decision is intact.
 */

interface Daemon {
  child: ChildProcessWithoutNullStreams;
  url: string;
  api: ApiClient;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function startDaemon(dataDir: string, extraEnv: Record<string, string> = {}): Promise<Daemon> {
  const child = spawn(process.execPath, [CLI_PATH, 'serve'], {
    env: cleanEnv({
      COUNTERSIGN_HOST: '127.0.0.1',
      COUNTERSIGN_PORT: '0',
      COUNTERSIGN_DATA_DIR: dataDir,
      COUNTERSIGN_ADMIN_TOKEN: ADMIN_TOKEN,
      COUNTERSIGN_LOG_LEVEL: 'warn',
      COUNTERSIGN_CALLBACKS_ALLOWLIST: '127.0.0.1',
      COUNTERSIGN_CALLBACKS_SECRET: SECRET,
      ...extraEnv,
    }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  // The banner ("listening on …") is on stderr.
  const url = await new Promise<string>((resolve, reject) => {
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (m) resolve(m[1]!);
    });
    void exited.then(({ code, signal }) => reject(new Error(`daemon exited (${code ?? signal}) before listening:\n${out}\n${stderr}`)));
  });
  return { child, url, api: createApiClient(url, ADMIN_TOKEN), exited };
}

async function kill9(d: Daemon) {
  d.child.kill('SIGKILL');
  expect(await d.exited).toEqual({ code: null, signal: 'SIGKILL' });
}

/*
 * Both scenarios share one daemon lifetime: their requests are decided, the daemon is killed
 * once and restarted once (two process starts instead of four). The receiver tells them apart
 * by path: the first call to /hang is held open, the first to /fail gets a 503.
 */
describe('callbacks survive kill -9', () => {
  let dataDir: string;
  let receiver: Receiver;
  const daemons: Daemon[] = [];
  let second: Daemon;
  let inFlight: { r: any; decided: any; first: ReceivedCallback };
  let waiting: { r: any; decided: any; first: ReceivedCallback };

  beforeAll(async () => {
    if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run npx tsc -p tsconfig.json first`);
    dataDir = mkdtempSync(join(tmpdir(), 'countersign-crash-'));
    const calls = new Map<string, number>();
    receiver = await startReceiver((_n, req) => {
      const n = (calls.get(req.path) ?? 0) + 1;
      calls.set(req.path, n);
      if (req.path === '/hang' && n === 1) return 'hang';
      return { status: req.path === '/fail' && n === 1 ? 503 : 200 };
    });
    const env = { COUNTERSIGN_CALLBACKS_RETRY_SCHEDULE: '1s' };
    const first = await startDaemon(dataDir, env);
    daemons.push(first);
    const hung = await createWithCallback(first.api, `${receiver.url}/hang`);
    const failed = await createWithCallback(first.api, `${receiver.url}/fail`);
    const hungDecided = await decideRequest(first.api, hung, 'deny', { feedback: 'not today' });
    const failedDecided = await decideRequest(first.api, failed, 'approve');
    await receiver.waitFor(2);
    await waitForDeliveries(first.api, failed.id, (list) => list[0]?.state === 'pending' && list[0].attempts.length === 1);
    const firstCall = (path: string) => receiver.received.find((c) => c.path === path)!;
    inFlight = { r: hung, decided: hungDecided, first: firstCall('/hang') };
    waiting = { r: failed, decided: failedDecided, first: firstCall('/fail') };
    await kill9(first);

    second = await startDaemon(dataDir, env);
    daemons.push(second);
  }, 120_000);

  afterAll(async () => {
    for (const d of daemons.splice(0)) {
      if (d.child.exitCode === null && d.child.signalCode === null) {
        d.child.kill('SIGTERM');
        await d.exited;
      }
    }
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The calls `path` has received once `n` of them arrived. */
  async function callsTo(path: string, n: number): Promise<ReceivedCallback[]> {
    for (let total = receiver.received.length + 1; ; total++) {
      const mine = receiver.received.filter((c) => c.path === path);
      if (mine.length >= n) return mine;
      await receiver.waitFor(total);
    }
  }

  it('killed while the delivery is in flight: delivered after restart, same webhook-id, decision intact', async () => {
    const { r, decided, first } = inFlight;
    const retried = (await callsTo('/hang', 2))[1]!;
    expect(retried.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(retried.body).toBe(first.body);
    new Webhook(SECRET).verify(retried.body, retried.headers as Record<string, string>);
    expect(JSON.parse(retried.body)).toMatchObject({ type: 'request.decided', data: { request: decided, decision: decided.decision } });

    const show = await second.api.get(`/v1/requests/${r.id}`);
    expect(show.body).toEqual(decided);
    const [d] = await waitForDeliveries(second.api, r.id, (list) => list[0]?.state === 'delivered');
    expect(d.id).toBe(first.headers['webhook-id']);
    expect(d.attempts.map((a: any) => [a.n, a.status, a.error_class])).toEqual([
      [1, null, 'interrupted'],
      [2, 200, null],
    ]);
    const audit = await auditOf(second.api, r.id);
    expect(audit.map((a) => a.event)).toEqual(['created', 'decided', 'callback.delivered']);
    expect(receiver.received.filter((c) => c.path === '/hang')).toHaveLength(2);
  });

  it('killed while a retry is waiting: the retry is made after restart', async () => {
    const { r, decided, first } = waiting;
    const received = await callsTo('/fail', 2);
    expect(received[1]!.headers['webhook-id']).toBe(first.headers['webhook-id']);
    const [d] = await waitForDeliveries(second.api, r.id, (list) => list[0]?.state === 'delivered');
    expect(d.attempts.map((a: any) => a.status)).toEqual([503, 200]);
    expect((await second.api.get(`/v1/requests/${r.id}`)).body).toEqual(decided);
    expect((await auditOf(second.api, r.id)).filter((a) => a.event === 'callback.delivered')).toHaveLength(1);
  });
});

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SECRET, auditOf, createWithCallback, decideRequest, startReceiver, waitForDeliveries, type Receiver } from '../callbacks/callback-kit.js';
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
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
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

describe('callbacks survive kill -9', () => {
  let dataDir: string;
  let receiver: Receiver | undefined;
  const daemons: Daemon[] = [];

  beforeAll(() => {
    if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run npx tsc -p tsconfig.json first`);
  });

  afterEach(async () => {
    for (const d of daemons.splice(0)) {
      if (d.child.exitCode === null && d.child.signalCode === null) {
        d.child.kill('SIGTERM');
        await d.exited;
      }
    }
    await receiver?.close();
    receiver = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('killed while the delivery is in flight: delivered after restart, same webhook-id, decision intact', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'countersign-crash-'));
    // The first attempt is held open by the receiver until the daemon is dead.
    receiver = await startReceiver((n) => (n === 1 ? 'hang' : { status: 200 }));
    const first = await startDaemon(dataDir);
    daemons.push(first);
    const r = await createWithCallback(first.api, `${receiver.url}/hook`);
    const decided = await decideRequest(first.api, r, 'deny', { feedback: 'not today' });
    const [inFlight] = await receiver.waitFor(1);
    await kill9(first);

    const second = await startDaemon(dataDir);
    daemons.push(second);
    const received = await receiver.waitFor(2);
    const retried = received[1]!;
    expect(retried.headers['webhook-id']).toBe(inFlight!.headers['webhook-id']);
    expect(retried.body).toBe(inFlight!.body);
    new Webhook(SECRET).verify(retried.body, retried.headers as Record<string, string>);
    expect(JSON.parse(retried.body)).toMatchObject({ type: 'request.decided', data: { request: decided, decision: decided.decision } });

    const show = await second.api.get(`/v1/requests/${r.id}`);
    expect(show.body).toEqual(decided);
    const [d] = await waitForDeliveries(second.api, r.id, (list) => list[0]?.state === 'delivered');
    expect(d.id).toBe(inFlight!.headers['webhook-id']);
    expect(d.attempts.map((a: any) => [a.n, a.status, a.error_class])).toEqual([
      [1, null, 'interrupted'],
      [2, 200, null],
    ]);
    const audit = await auditOf(second.api, r.id);
    expect(audit.map((a) => a.event)).toEqual(['created', 'decided', 'callback.delivered']);
    expect(receiver.received).toHaveLength(2);
  });

  it('killed while a retry is waiting: the retry is made after restart', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'countersign-crash-'));
    receiver = await startReceiver((n) => ({ status: n === 1 ? 503 : 200 }));
    const env = { COUNTERSIGN_CALLBACKS_RETRY_SCHEDULE: '1s' };
    const first = await startDaemon(dataDir, env);
    daemons.push(first);
    const r = await createWithCallback(first.api, `${receiver.url}/hook`);
    const decided = await decideRequest(first.api, r, 'approve');
    await waitForDeliveries(first.api, r.id, (list) => list[0]?.state === 'pending' && list[0].attempts.length === 1);
    await kill9(first);

    const second = await startDaemon(dataDir, env);
    daemons.push(second);
    const received = await receiver.waitFor(2);
    expect(received[1]!.headers['webhook-id']).toBe(received[0]!.headers['webhook-id']);
    const [d] = await waitForDeliveries(second.api, r.id, (list) => list[0]?.state === 'delivered');
    expect(d.attempts.map((a: any) => a.status)).toEqual([503, 200]);
    expect((await second.api.get(`/v1/requests/${r.id}`)).body).toEqual(decided);
    expect((await auditOf(second.api, r.id)).filter((a) => a.event === 'callback.delivered')).toHaveLength(1);
  });
});

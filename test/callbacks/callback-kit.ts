import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { CallbackDispatcherOverrides } from '../../src/callbacks/callback-dispatcher.js';
import type { Resolver } from '../../src/callbacks/safe-dispatcher.js';
import type { Clock } from '../../src/lib/clock.js';
import { loadConfig, type Config, type DeepPartial } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { ADMIN_TOKEN, createApiClient, type ApiClient } from '../helpers/test-server.js';

/** Shared pieces of the callback tests: a real loopback receiver and a daemon wired for it. */

export const SECRET = 'whsec_' + Buffer.from('countersign-test-secret-32-bytes!').toString('base64');

export interface ReceivedCallback {
  n: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The sender's port (to find which process sent it). */
  remotePort?: number | undefined;
}

/** What the receiver answers: a status with headers, or `hang` (never answer; the test releases it). */
export type ReceiverAnswer = { status: number; headers?: Record<string, string> } | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedCallback[];
  /** TCP connections accepted so far (a refused dial never shows up here). */
  connections(): number;
  /** Resolves once `n` requests have fully arrived. */
  waitFor(n: number): Promise<ReceivedCallback[]>;
  /** Responses held by `hang`, oldest first. */
  held: ServerResponse[];
  close(): Promise<void>;
}

/**
 * An HTTP server on 127.0.0.1 that records every request. `answer` is called per request
 * (1-based) and defaults to 200.
 */
export async function startReceiver(answer: (n: number, req: ReceivedCallback) => ReceiverAnswer = () => ({ status: 200 })): Promise<Receiver> {
  const received: ReceivedCallback[] = [];
  const held: ServerResponse[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const waiters: Array<{ n: number; resolve: (r: ReceivedCallback[]) => void }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec: ReceivedCallback = {
        n: received.length + 1,
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        remotePort: req.socket.remotePort,
      };
      received.push(rec);
      const a = answer(rec.n, rec);
      if (a === 'hang') held.push(res);
      else res.writeHead(a.status, a.headers ?? {}).end();
      for (const w of [...waiters]) {
        if (received.length >= w.n) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(received.slice());
        }
      }
    });
  });
  server.on('connection', (s: Socket) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    held,
    connections: () => connections,
    waitFor(n) {
      if (received.length >= n) return Promise.resolve(received.slice());
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A TCP listener that only counts connections: proof that nothing was dialled. */
export async function startTrap(): Promise<{ port: number; connections(): number; close(): Promise<void> }> {
  let connections = 0;
  const server = createServer();
  server.on('connection', (s: Socket) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface CallbackServer {
  url: string;
  api: ApiClient;
  dataDir: string;
  close(): Promise<void>;
  /** Closes the daemon but keeps its data dir (for a restart on the same data). */
  stop(): Promise<void>;
}

/**
 * The real daemon on a real port with a temp SQLite file, configured for callbacks: signed
 * with SECRET, allowlist 127.0.0.1, jitter off (random 0.5) unless overridden.
 */
export async function startCallbackServer(
  overrides: DeepPartial<Config> = {},
  opts: { clock?: Clock; callbacks?: CallbackDispatcherOverrides; dataDir?: string } = {},
): Promise<CallbackServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'countersign-callbacks-'));
  const config = loadConfig({
    env: {},
    overrides: {
      host: '127.0.0.1',
      port: 0,
      log_level: 'silent',
      admin_token: ADMIN_TOKEN,
      ...overrides,
      callbacks: { allowlist: ['127.0.0.1'], secret: SECRET, ...overrides.callbacks },
      data_dir: dataDir,
    },
  });
  const server = await startServer(config, {
    ...(opts.clock ? { clock: opts.clock } : {}),
    callbacks: { random: () => 0.5, ...opts.callbacks },
  });
  return {
    url: server.url,
    api: createApiClient(server.url, ADMIN_TOKEN),
    dataDir,
    stop: () => server.close(),
    async close() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A resolver that answers from a table and never asks real DNS. */
export function fakeResolver(table: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = (async (hostname: string) => {
    calls.push(hostname);
    const answers = table[hostname.toLowerCase()];
    if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  }) as Resolver & { calls: string[] };
  resolve.calls = calls;
  return resolve;
}

export async function createWithCallback(api: ApiClient, callbackUrl: string, extra: Record<string, unknown> = {}): Promise<any> {
  const res = await api.post('/v1/requests', { title: 'Deploy staging', kind: 'command', callback_url: callbackUrl, ...extra });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function decideRequest(
  api: ApiClient,
  record: { id: string; content_hash: string },
  option = 'approve',
  extra: Record<string, unknown> = {},
): Promise<any> {
  const res = await api.post(`/v1/requests/${record.id}/decision`, { option, content_hash: record.content_hash, ...extra });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

export async function deliveriesOf(api: ApiClient, id: string): Promise<any[]> {
  const res = await api.get(`/v1/requests/${id}/deliveries`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

export async function auditOf(api: ApiClient, id: string): Promise<Array<{ event: string; actor: string; details?: any }>> {
  const res = await api.get(`/v1/requests/${id}/audit`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Polls the deliveries endpoint until `done` holds: the worker records attempts asynchronously. */
export async function waitForDeliveries(api: ApiClient, id: string, done: (d: any[]) => boolean): Promise<any[]> {
  for (;;) {
    const d = await deliveriesOf(api, id);
    if (done(d)) return d;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** handup's signature, computed by hand: hex HMAC-SHA256 of "<ts>.<body>" keyed by the secret string. */
export function handupSignature(secret: string, ts: string, body: string): string {
  return 'sha256=' + createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${ts}.${body}`).digest('hex');
}

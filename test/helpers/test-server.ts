import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config, type DeepPartial } from '../../src/config.js';
import { startServer, type RunningServer, type StartOptions } from '../../src/server.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface ApiClient {
  request<T = any>(method: string, path: string, body?: unknown, opts?: { token?: string | null; headers?: Record<string, string>; raw?: string | Buffer }): Promise<ApiResponse<T>>;
  get<T = any>(path: string, opts?: { token?: string | null }): Promise<ApiResponse<T>>;
  post<T = any>(path: string, body?: unknown, opts?: { token?: string | null }): Promise<ApiResponse<T>>;
  delete<T = any>(path: string, opts?: { token?: string | null }): Promise<ApiResponse<T>>;
}

/** A small fetch-based client for a real server on a real port. `token: null` sends none. */
export function createApiClient(baseUrl: string, defaultToken: string): ApiClient {
  const client: ApiClient = {
    async request(method, path, body, opts = {}) {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      const token = opts.token === undefined ? defaultToken : opts.token;
      if (token) headers.authorization = `Bearer ${token}`;
      let payload: string | Buffer | undefined;
      if (opts.raw !== undefined) payload = opts.raw;
      else if (body !== undefined) payload = JSON.stringify(body);
      if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
      const res = await fetch(baseUrl + path, { method, headers, body: payload });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, body: parsed as any, text, headers: res.headers };
    },
    get: (path, opts) => client.request('GET', path, undefined, opts),
    post: (path, body, opts) => client.request('POST', path, body ?? {}, opts),
    delete: (path, opts) => client.request('DELETE', path, undefined, opts),
  };
  return client;
}

export interface TestServer {
  server: RunningServer;
  url: string;
  wsUrl: string;
  dataDir: string;
  adminToken: string;
  api: ApiClient;
  /** Creates a submit token and returns a client that uses it. */
  submitClient(name: string): Promise<{ token: string; api: ApiClient }>;
  close(): Promise<void>;
}

/**
 * Starts the real daemon on 127.0.0.1 with a random port and a fresh SQLite file in a temp
 * directory. Close it in afterEach.
 */
export async function startTestServer(overrides: DeepPartial<Config> = {}, opts: Pick<StartOptions, 'clock' | 'adapters' | 'log'> = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'countersign-test-'));
  const config = loadConfig({
    env: {},
    overrides: { host: '127.0.0.1', port: 0, log_level: 'silent', admin_token: ADMIN_TOKEN, ...overrides, data_dir: overrides.data_dir ?? dataDir },
  });
  const server = await startServer(config, opts);
  const api = createApiClient(server.url, ADMIN_TOKEN);
  return {
    server,
    url: server.url,
    wsUrl: server.url.replace(/^http/, 'ws'),
    dataDir: config.data_dir,
    adminToken: ADMIN_TOKEN,
    api,
    async submitClient(name) {
      const res = await api.post('/v1/tokens', { name });
      if (res.status !== 201) throw new Error(`cannot create token ${name}: ${res.status} ${res.text}`);
      return { token: res.body.token as string, api: createApiClient(server.url, res.body.token as string) };
    },
    async close() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

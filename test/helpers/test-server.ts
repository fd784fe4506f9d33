import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { loadConfig, type Config, type DeepPartial } from '../../src/config.js';
import { startServer, type RunningServer, type StartOptions } from '../../src/server.js';
import { numberPlaceholders } from '../../src/storage/postgres/postgres-runner.js';
import { freshPostgresSchema, TEST_POSTGRES_URL, type FreshPostgres } from './postgres.js';

/**
 * Which store test daemons use: SQLite (the default), or PostgreSQL when
 * `CS_TEST_STORE=postgres` (with `CS_TEST_POSTGRES_URL`; `npm run test:all`
 * runs the integration suite both ways).
 */
export const TEST_STORE: 'sqlite' | 'postgres' = process.env.CS_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';
if (TEST_STORE === 'postgres' && !TEST_POSTGRES_URL) throw new Error('CS_TEST_STORE=postgres needs CS_TEST_POSTGRES_URL');

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface ApiClient {
  request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    opts?: { token?: string | null; headers?: Record<string, string>; raw?: string | Buffer },
  ): Promise<ApiResponse<T>>;
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
  /**
   * Reads the daemon's database directly, whichever store it runs on (write SQL both dialects
   * take; `?` placeholders). For checks such as "nothing was stored".
   */
  sql<T = Record<string, unknown>>(query: string, params?: unknown[]): Promise<T[]>;
  /** `SELECT COUNT(*)` of a table. */
  count(table: string): Promise<number>;
  close(): Promise<void>;
}

/** PostgreSQL schemas by data directory: a daemon restarted on the same data dir finds its data. */
const schemas = new Map<string, FreshPostgres>();

/**
 * Starts the real daemon on 127.0.0.1 with a random port, a temp data directory and a fresh
 * store: a new SQLite file, or a new PostgreSQL schema (see TEST_STORE). Close it in afterEach.
 * Starting again with `data_dir` of an earlier server (after `server.close()`) reopens its store.
 */
export async function startTestServer(
  overrides: DeepPartial<Config> = {},
  { env = {}, ...opts }: Pick<StartOptions, 'clock' | 'adapters' | 'callbacks' | 'log'> & { env?: Record<string, string> } = {},
): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'countersign-test-'));
  const dataKey = overrides.data_dir ?? dataDir;
  let fresh: FreshPostgres | undefined;
  if (TEST_STORE === 'postgres' && !overrides.storage?.url) {
    fresh = schemas.get(dataKey) ?? (await freshPostgresSchema());
    schemas.set(dataKey, fresh);
  }
  const storage = fresh ? { ...overrides.storage, url: fresh.url } : overrides.storage;
  const config = loadConfig({
    env,
    // The formats and the `format` matchers of the config follow the adapters the daemon serves.
    ...(opts.adapters ? { adapters: opts.adapters } : {}),
    overrides: {
      host: '127.0.0.1',
      port: 0,
      log_level: 'silent',
      admin_token: ADMIN_TOKEN,
      ...overrides,
      ...(storage ? { storage } : {}),
      data_dir: overrides.data_dir ?? dataDir,
    },
  });
  let server: RunningServer;
  try {
    server = await startServer(config, opts);
  } catch (err) {
    if (fresh && !overrides.data_dir) {
      schemas.delete(dataKey);
      await fresh.drop();
    }
    throw err;
  }
  const api = createApiClient(server.url, ADMIN_TOKEN);
  const sql = async <T>(query: string, params: unknown[] = []): Promise<T[]> => {
    if (config.storage.url) {
      // BIGINT columns read as numbers, as the daemon reads them.
      const c = new pg.Client({
        connectionString: config.storage.url,
        types: {
          getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)),
        } as never,
      });
      await c.connect();
      try {
        return (await c.query(numberPlaceholders(query), params)).rows as T[];
      } finally {
        await c.end();
      }
    }
    const db = new Database(join(config.data_dir, 'countersign.db'), { readonly: true });
    try {
      return db.prepare(query).all(...params) as T[];
    } finally {
      db.close();
    }
  };
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
    sql,
    async count(table) {
      const [row] = await sql<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table}`);
      return Number(row?.n ?? 0);
    },
    async close() {
      await server.close();
      // A caller that chose the data dir owns the data, as with SQLite: a daemon started again
      // on it finds its requests. Otherwise the store goes with the server.
      if (fresh && !overrides.data_dir) {
        schemas.delete(dataKey);
        await fresh.drop();
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

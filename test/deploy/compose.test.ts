import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { request } from 'node:http';
import { loadConfig } from '../../src/config.js';
import { startTestServer } from '../helpers/test-server.js';

/**
 * deploy/compose.yaml cannot run here (no Docker engine): this checks what it says against
 * what countersign reads. The multi-node test (test/cluster/) runs the same arrangement —
 * several daemons on one PostgreSQL — as real processes.
 */
const root = join(import.meta.dirname, '..', '..');
const compose = parse(readFileSync(join(root, 'deploy', 'compose.yaml'), 'utf8'), { merge: true });
const nginx = readFileSync(join(root, 'deploy', 'nginx.conf'), 'utf8');

const interpolate = (value: string, vars: Record<string, string>) =>
  value.replace(/\$\{([A-Z_]+)(?::-([^}]*)|:\?[^}]*)?\}/g, (_m, name: string, dflt?: string) => vars[name] ?? dflt ?? '');

describe('deploy/compose.yaml', () => {
  const replicas = Object.keys(compose.services).filter((s) => s.startsWith('countersign-'));

  it('runs PostgreSQL, two countersign replicas built from the Dockerfile, and a proxy, each with a health check', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['countersign-1', 'countersign-2', 'postgres', 'proxy']);
    expect(replicas).toHaveLength(2);
    for (const name of Object.keys(compose.services)) expect(compose.services[name].healthcheck?.test, name).toBeDefined();
    for (const r of replicas) {
      expect(compose.services[r].build).toEqual({ context: '..', dockerfile: 'Dockerfile' });
      expect(compose.services[r].depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    }
    expect(compose.services.proxy.depends_on).toEqual(Object.fromEntries(replicas.map((r) => [r, { condition: 'service_healthy' }])));
    expect(compose.services.postgres.volumes).toEqual(['pgdata:/var/lib/postgresql/data']);
  });

  it('gives every replica the same database, admin token and public URL, which countersign accepts', () => {
    const vars = { POSTGRES_PASSWORD: 'pw', COUNTERSIGN_ADMIN_TOKEN: 'a-long-enough-admin-token-0123' };
    const envs = replicas.map((r) => Object.fromEntries(Object.entries<string>(compose.services[r].environment).map(([k, v]) => [k, interpolate(v, vars)])));
    expect(envs[0]).toEqual(envs[1]);
    const pgEnv = compose.services.postgres.environment;
    expect(envs[0]!.COUNTERSIGN_STORAGE_URL).toBe(`postgres://${pgEnv.POSTGRES_USER}:pw@postgres:5432/${pgEnv.POSTGRES_DB}`);
    const config = loadConfig({ env: { ...envs[0], COUNTERSIGN_HOST: '0.0.0.0', COUNTERSIGN_DATA_DIR: '/data' } });
    expect(config.storage.url).toBe(envs[0]!.COUNTERSIGN_STORAGE_URL);
    expect(config.public_url).toBe('http://localhost:8080');
    // Required values fail loudly instead of starting with an empty password or token.
    expect(compose.services['countersign-1'].environment.COUNTERSIGN_ADMIN_TOKEN).toMatch(/:\?/);
    expect(pgEnv.POSTGRES_PASSWORD).toMatch(/:\?/);
  });

  it('proxies every replica round-robin, WebSockets and long holds included, keeping the Host', () => {
    for (const r of replicas) expect(nginx).toContain(`server ${r}:7470`);
    expect(nginx).toMatch(/proxy_set_header Upgrade \$http_upgrade/);
    // As the browser sent it, port included ($host would drop it, and the page's sign-in would be refused).
    expect(nginx).toMatch(/proxy_set_header Host \$http_host;/);
    // A Claude Code hook call may be held 10 minutes.
    expect(Number(/proxy_read_timeout (\d+)s/.exec(nginx)?.[1])).toBeGreaterThanOrEqual(600);
    expect(compose.services.proxy.volumes).toEqual(['./nginx.conf:/etc/nginx/conf.d/default.conf:ro']);
  });

  it("a replica takes the page's sign-in with the Host the proxy passes on, and refuses it with the port dropped", async () => {
    const t = await startTestServer({ public_url: 'http://localhost:8080' });
    try {
      const signIn = (host: string) =>
        new Promise<number>((resolve, reject) => {
          const body = JSON.stringify({ token: t.adminToken });
          const req = request(
            `${t.url}/v1/session`,
            {
              method: 'POST',
              headers: { host, origin: 'http://localhost:8080', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
            },
            (res) => {
              res.resume();
              resolve(res.statusCode!);
            },
          );
          req.on('error', reject);
          req.end(body);
        });
      expect(await signIn('localhost:8080')).toBe(200);
      expect(await signIn('localhost')).toBe(403);
    } finally {
      await t.close();
    }
  });
});

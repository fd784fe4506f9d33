// A throwaway PostgreSQL server for tests and benchmarks: initdb into a temporary directory,
// listen on a free loopback port, stop and delete it at the end. PostgreSQL refuses to run as
// root, so as root the server runs as the `postgres` user (Debian's package creates it).
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/** The directory of `initdb` and `pg_ctl`, or null when PostgreSQL is not installed. */
export function findPostgresBin() {
  const candidates = [];
  if (process.env.CS_PG_BIN) candidates.push(process.env.CS_PG_BIN);
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    // no pg_config on PATH
  }
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(join(debian, v, 'bin'));
  }
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) ?? null;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a new server. Resolves with `{url, port, stop(), start(), restart()}`; `url` is a
 * superuser URL to the `postgres` database (trust authentication on loopback only). `durable:
 * false` turns fsync off (tests).
 */
export async function startPostgresServer({ bin = findPostgresBin(), log = () => {}, durable = true } = {}) {
  if (!bin) throw new Error('PostgreSQL is not installed (no initdb/pg_ctl found; set CS_PG_BIN)');
  const root = mkdtempSync(join(tmpdir(), 'countersign-pg-'));
  const data = join(root, 'data');
  const asRoot = userInfo().uid === 0;
  // As root, run the server's commands as the postgres user, which must own its directory.
  const run = (cmd, args) => {
    const argv = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]] : [join(bin, cmd), args];
    const r = spawnSync(argv[0], argv[1], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`);
    return r.stdout;
  };
  if (asRoot) {
    const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(root, id('-u'), id('-g'));
  }
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-instructions']);
  const port = await freePort();
  // Loopback only; a socket directory of its own; enough connections for several daemons. Test
  // servers skip fsync (`durable: false`): their data dies with them, and a disk busy with other
  // suites (npm ci, a build) must not stall every commit. Benchmarks keep it on.
  writeFileSync(
    join(data, 'postgresql.auto.conf'),
    `listen_addresses = '127.0.0.1'\nport = ${port}\nunix_socket_directories = '${root}'\nmax_connections = 200\nfsync = ${durable ? 'on' : 'off'}\n`,
  );
  const ctl = (action) => run('pg_ctl', ['-D', data, '-l', join(root, 'server.log'), '-w', '-t', '60', ...(action === 'stop' ? ['-m', 'fast'] : []), action]);
  ctl('start');
  log(`PostgreSQL on 127.0.0.1:${port} (data in ${data})`);
  let running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start() {
      if (!running) ctl('start');
      running = true;
    },
    /** A fast shutdown: connections are cut, as when the server restarts. */
    stop() {
      if (running) ctl('stop');
      running = false;
    },
    restart() {
      this.stop();
      this.start();
    },
    /** Stops the server and deletes its directory. */
    destroy() {
      try {
        this.stop();
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}

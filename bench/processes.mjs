// Starting and stopping the servers under test as real child processes, pinned to core 0 (the
// load generator runs on core 1), as the peers' baseline figures were measured.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
const PIN = existsSync('/usr/bin/taskset') ? ['taskset', '-c', '0'] : [];

function start(args, env, pattern) {
  const [cmd, ...rest] = [...PIN, process.execPath, ...args];
  const child = spawn(cmd, rest, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  // A server that dies mid-run says why, instead of surfacing later as a refused connection.
  child.on('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGTERM' && code !== null) process.stderr.write(`server exited with ${code}:\n${stderr}\n`);
  });
  return new Promise((resolve, reject) => {
    let out = '';
    // The daemon prints where it listens on stderr, the baseline on stdout.
    const onData = (d) => {
      out += d;
      const m = pattern.exec(out);
      if (m) {
        child.stdout.off('data', onData);
        child.stderr.off('data', onData);
        child.stdout.resume();
        resolve({ child, url: m[1], stop: () => stop(child) });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`process exited with ${code} before listening:\n${out}\n${stderr}`)));
  });
}

export function stop(child) {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** The real daemon (`node dist/cli.js serve`), with the event-loop probe preloaded. */
export function startDaemon({ dataDir, synchronous = 'full', eldFile, cpuProfDir, env = {} }) {
  const flags = ['--import', './bench/eld-probe.mjs'];
  if (cpuProfDir) flags.push('--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`);
  return start(
    [...flags, 'dist/cli.js', 'serve'],
    {
      COUNTERSIGN_PORT: '0',
      COUNTERSIGN_DATA_DIR: dataDir,
      COUNTERSIGN_ADMIN_TOKEN: ADMIN_TOKEN,
      COUNTERSIGN_LOG_LEVEL: 'warn',
      COUNTERSIGN_STORAGE_SYNCHRONOUS: synchronous,
      COUNTERSIGN_CALLBACKS_ALLOWLIST: '127.0.0.1',
      COUNTERSIGN_REQUESTS_MAX_PER_MINUTE: '0',
      BENCH_ELD_FILE: eldFile ?? '',
      ...env,
    },
    /listening on (http:\/\/\S+)/,
  );
}

/** The bare baseline: `mode` is `per-request` or `group` (SQLite at `dbPath`) or `postgres` (at `pgUrl`). */
export function startBaseline({ dbPath, synchronous = 'full', mode = 'per-request', pgUrl = '' }) {
  return start(
    ['bench/baseline-server.mjs'],
    { BASELINE_DB: dbPath ?? '', BASELINE_SYNCHRONOUS: synchronous, BASELINE_MODE: mode, BASELINE_PG_URL: pgUrl },
    /baseline listening on (http:\/\/\S+)/,
  );
}

// Clock ticks per second of /proc/<pid>/stat's CPU times.
const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** CPU seconds (user + system, every thread) a process has used so far; NaN where /proc has none. */
export function cpuSeconds(pid) {
  try {
    // The fields after the command name, which may itself hold spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return NaN;
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import { CLI_PATH, cleanEnv } from './cli-process.js';

export interface DaemonProcess {
  child: ChildProcess;
  /** Base URL parsed from the daemon's "listening on http://…" line. */
  url: string;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** What it printed on stdout alone (log lines) and on stderr alone (the banner, start-up errors). */
  stdout(): string;
  stderr(): string;
  /** Resolves once the output matches `pattern` (logs are written asynchronously). */
  outputMatching(pattern: RegExp): Promise<string>;
  /** Settles once the process has exited and every process holding its output has closed it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL: no shutdown code runs, exactly like a crash or `kill -9`. */
  kill9(): Promise<void>;
  /** Sends `signal` (to the whole process group when started with `group`) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface SpawnDaemonOptions {
  env: Record<string, string>;
  /** The command line; defaults to `node dist/cli.js serve`. */
  argv?: string[];
  cwd?: string;
  /** Start in its own process group, as a terminal runs a command (for wrappers such as npm). */
  group?: boolean;
}

/**
 * Starts the daemon as a real child process and resolves once it prints where it listens
 * (the line is written after the port is bound, so the URL answers at once).
 */
export function spawnDaemon({ env, argv = [process.execPath, CLI_PATH, 'serve'], cwd, group = false }: SpawnDaemonOptions): Promise<DaemonProcess> {
  const [command, ...args] = argv as [string, ...string[]];
  const child = spawn(command, args, { env: cleanEnv(env), cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: group });
  const send = (sig: NodeJS.Signals) => (group ? process.kill(-child.pid!, sig) : child.kill(sig));
  let out = '';
  const streams = { stdout: '', stderr: '' };
  const watchers = new Set<() => void>();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    let resolved = false;
    const onData = (from: 'stdout' | 'stderr') => (chunk: string) => {
      out += chunk;
      streams[from] += chunk;
      for (const check of [...watchers]) check();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m && !resolved) {
        resolved = true;
        resolve({
          child,
          url: m[1]!,
          output: () => out,
          stdout: () => streams.stdout,
          stderr: () => streams.stderr,
          outputMatching: (pattern) =>
            new Promise<string>((resolveMatch, rejectMatch) => {
              const check = () => {
                if (pattern.test(out)) {
                  watchers.delete(check);
                  resolveMatch(out);
                }
              };
              watchers.add(check);
              check();
              void exited.then(() => {
                if (watchers.delete(check)) rejectMatch(new Error(`the daemon exited without printing ${pattern}:\n${out}`));
              });
            }),
          exited,
          async kill9() {
            send('SIGKILL');
            await exited;
          },
          async stop(sig = 'SIGTERM') {
            send(sig);
            return exited;
          },
        });
      }
    };
    child.stdout!.setEncoding('utf8').on('data', onData('stdout'));
    child.stderr!.setEncoding('utf8').on('data', onData('stderr'));
    child.on('error', reject);
    void exited.then(({ code, signal }) => {
      if (!resolved) reject(new Error(`the daemon exited (code ${code}, signal ${signal}) before listening:\n${out}`));
    });
  });
}

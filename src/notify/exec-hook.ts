import { spawn } from 'node:child_process';
import type { AttemptOutcome } from '../callbacks/retry-policy.js';

export interface ExecRun {
  argv: readonly string[];
  stdin: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** Aborted on shutdown: the program is killed and the attempt counts as interrupted. */
  signal: AbortSignal;
}

/**
 * One attempt of an `exec` hook: the program is started with its argv (never a shell), the
 * envelope written to its stdin, stdout and stderr discarded. Exit 0 within the timeout is
 * success; a non-zero exit, a signal, a start failure or the timeout is a failed attempt, retried
 * on the callbacks' schedule. On timeout the program is killed (SIGKILL: it had its chance).
 */
export function runExecHook({ argv, stdin, env, timeoutMs, signal }: ExecRun): Promise<AttemptOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'ignore', 'ignore'], env, shell: false });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      done({ kind: 'retry', status: null, errorClass: 'timeout', error: `the program did not exit within ${timeoutMs} ms`, retryAfterMs: null });
    }, timeoutMs);
    const onAbort = () => {
      child.kill('SIGKILL');
      done({ kind: 'interrupted', error: 'the daemon stopped before the attempt finished' });
    };
    signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) =>
      done({ kind: 'retry', status: null, errorClass: 'network', error: `cannot run ${argv[0]}: ${err.message}`, retryAfterMs: null }),
    );
    child.on('exit', (code, sig) => {
      if (code === 0) done({ kind: 'delivered', status: 0 });
      else
        done({
          kind: 'retry',
          status: code,
          errorClass: 'exit_status',
          error: sig ? `the program was killed by ${sig}` : `the program exited with status ${code}`,
          retryAfterMs: null,
        });
    });
    // A program that exits without reading its stdin closes the pipe: not an error of the hook.
    child.stdin.on('error', () => {});
    child.stdin.end(stdin);
  });
}

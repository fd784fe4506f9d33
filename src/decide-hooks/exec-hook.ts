import { spawn } from 'node:child_process';
import { HookFailure, MAX_ANSWER_BYTES } from './hook-answer.js';

export interface ExecHookOptions {
  timeoutMs: number;
  env: Readonly<Record<string, string | undefined>>;
  /** Aborts the run (daemon shutdown): the child is killed. */
  signal?: AbortSignal;
}

/**
 * Runs a decide hook program: `argv` directly (never a shell), the Request JSON on stdin, its
 * stdout the answer. Resolves with stdout when it exits 0 within the timeout; otherwise (a
 * timeout, a non-zero exit, a signal, a program that cannot start, stdout past 64 KiB) the
 * program and whatever it started are killed and HookFailure thrown. stderr is kept (cut short) for the log.
 */
export function runExecHook(argv: readonly string[], input: string, { timeoutMs, env, signal }: ExecHookOptions): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const [program, ...args] = argv as [string, ...string[]];
    // Its own process group, so a timeout kills whatever it started too: a child of the program
    // holding stdout open would otherwise keep the answer (and the hook's queue) waiting.
    const group = process.platform !== 'win32';
    const child = spawn(program, args, { shell: false, stdio: ['pipe', 'pipe', 'pipe'], env: env as NodeJS.ProcessEnv, windowsHide: true, detached: group });
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = '';
    let failure: HookFailure | null = null;
    let settled = false;

    const fail = (f: HookFailure) => {
      failure ??= f;
      kill();
    };
    const kill = () => {
      try {
        if (group && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // The group is gone already (everything in it has exited).
      }
    };
    const timer = setTimeout(() => fail(new HookFailure('timeout', `no answer within ${timeoutMs} ms`)), timeoutMs);
    const onAbort = () => fail(new HookFailure('exit', 'the daemon is shutting down'));
    signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > MAX_ANSWER_BYTES) return fail(new HookFailure('too_large', `the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
      out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 2048) stderr += chunk.toString('utf8').slice(0, 2048 - stderr.length);
    });
    // A program that exits without reading stdin makes the write fail (EPIPE): its exit decides.
    child.stdin.on('error', () => {});
    child.stdin.end(input);

    const finish = (err: HookFailure | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve({ stdout: Buffer.concat(out).toString('utf8'), stderr });
    };
    child.on('error', (err: NodeJS.ErrnoException) => finish(failure ?? new HookFailure('spawn', `cannot run ${program}: ${err.code ?? err.message}`)));
    child.on('close', (code, sig) => {
      if (failure) return finish(failure);
      if (code !== 0) return finish(new HookFailure('exit', code === null ? `killed by ${sig}` : `exited with status ${code}`));
      finish(null);
    });
  });
}

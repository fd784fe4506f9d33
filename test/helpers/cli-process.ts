import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** The built CLI entry; `npm test` builds before running the suite. */
export const CLI_PATH = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * A minimal environment for child processes: the developer's own COUNTERSIGN_* variables must
 * not leak into a test.
 */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[key] !== undefined) env[key] = process.env[key]!;
  return { ...env, ...extra };
}

/**
 * Runs `node dist/cli.js <args>` to completion, as a separate process: for what only a real
 * process shows (its exit code, piped stdin, `serve`). Client logic is tested in-process
 * (cli-harness.ts), which is much faster.
 */
export function runCli(
  args: string[],
  opts: { env?: Record<string, string>; input?: string; cwd?: string; nodeArgs?: string[]; asUser?: { uid: number; gid: number } } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), CLI_PATH, ...args], {
      env: cleanEnv(opts.env),
      cwd: opts.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(opts.asUser ? { uid: opts.asUser.uid, gid: opts.asUser.gid } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

import { readFileSync } from 'node:fs';
import { clientEnv } from '../../src/client-env.js';
import type { CliContext } from '../../src/cli/cli-context.js';
import { runCli } from '../../src/cli/run-cli.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface InProcessCliOptions {
  /** COUNTERSIGN_* variables the command sees (nothing from the developer's own environment). */
  env?: Record<string, string>;
  cwd?: string;
  /** Called instead of a real pause when the command backs off (reconnecting to a restarting daemon). */
  sleep?: (ms: number) => Promise<void>;
  /** The clock the command reads (default Date.now). */
  now?: () => number;
  /** Sees every HTTP call the command makes (it must still make it, e.g. with the real fetch). */
  fetch?: typeof fetch;
}

/**
 * Runs CLI commands in this process through `runCli(argv, ctx)`, with a context that captures
 * stdout and stderr and reads stdin from a string. Everything else is real: HTTP to a real
 * daemon, files, the exit code the process would get.
 */
export function inProcessCli({ env = {}, cwd = process.cwd(), sleep, now, fetch }: InProcessCliOptions = {}) {
  return async (args: string[], input = ''): Promise<CliRun> => {
    let stdout = '';
    let stderr = '';
    const ctx: CliContext = {
      out: (s) => void (stdout += s),
      err: (s) => void (stderr += s),
      readStdin: async () => input,
      readFile: (path) => readFileSync(path, 'utf8'),
      cwd,
      hostname: 'test-host',
      env: clientEnv(env),
      ...(sleep ? { sleep } : {}),
      ...(now ? { now } : {}),
      ...(fetch ? { fetch } : {}),
    };
    const code = await runCli(args, ctx);
    return { code, stdout, stderr };
  };
}

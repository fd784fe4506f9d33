import type { clientEnv } from '../config.js';
import { createApiClient, type ApiClient, type Fetch } from './api-client.js';
import { resolveClientSettings } from './client-settings.js';

/** Everything a command touches outside itself, handed in by run-cli.ts (the only wiring place). */
export interface CliContext {
  out(text: string): void;
  err(text: string): void;
  readStdin(): Promise<string>;
  readFile(path: string): string;
  cwd: string;
  hostname: string;
  env: ReturnType<typeof clientEnv>;
  fetch?: Fetch;
}

/** The API client for the `--url`/`--token` a command was given (or their fallbacks). */
export function connect(ctx: CliContext, flags: { url?: string | undefined; token?: string | undefined }): ApiClient {
  const { url, token } = resolveClientSettings(flags, ctx.env, { cwd: ctx.cwd, readFile: ctx.readFile });
  return createApiClient({ baseUrl: url, token, ...(ctx.fetch ? { fetch: ctx.fetch } : {}) });
}

export function printJson(ctx: CliContext, value: unknown): void {
  ctx.out(`${JSON.stringify(value, null, 2)}\n`);
}

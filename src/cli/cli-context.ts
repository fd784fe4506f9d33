import type { ClientEnv } from '../client-env.js';
import { createApiClient, type ApiClient, type Fetch } from './api-client.js';
import { resolveClientSettings } from './client-settings.js';
import { jsonText } from './terminal-text.js';

/** Everything a command touches outside itself, handed in by run-cli.ts (the only wiring place). */
export interface CliContext {
  out(text: string): void;
  err(text: string): void;
  readStdin(): Promise<string>;
  readFile(path: string): string;
  cwd: string;
  hostname: string;
  env: ClientEnv;
  fetch?: Fetch;
  /** Pauses between reconnect attempts (default: a timer); tests observe the back-off here. */
  sleep?: (ms: number) => Promise<void>;
  /** Milliseconds since the epoch (default Date.now), compared with a request's `expires_at`. */
  now?: () => number;
}

/** The API client for the `--url`/`--token` a command was given (or their fallbacks). */
export function connect(ctx: CliContext, flags: { url?: string | undefined; token?: string | undefined }): ApiClient {
  const { url, token } = resolveClientSettings(flags, ctx.env, { cwd: ctx.cwd, readFile: ctx.readFile });
  return createApiClient({ baseUrl: url, token, ...(ctx.fetch ? { fetch: ctx.fetch } : {}) });
}

export function printJson(ctx: CliContext, value: unknown): void {
  ctx.out(`${jsonText(value)}\n`);
}

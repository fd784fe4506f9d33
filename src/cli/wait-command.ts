import { parseArgs } from 'node:util';
import type { HandupRequest } from '../requests/request-schema.js';
import type { ApiClient } from './api-client.js';
import { connect, printJson, type CliContext } from './cli-context.js';
import { COMMON_OPTIONS, expectPositionals, parseOrUsage } from './command-args.js';
import { exitCodeForStatus } from './exit-codes.js';
import { outcome, waitJson } from './render.js';

/**
 * Loops the long-poll until the request leaves pending. A wait answer may still be pending
 * (the poll timed out, or the daemon is shutting down): that is a reason to ask again, never
 * to assume an outcome.
 */
export async function waitUntilDecided(api: ApiClient, id: string): Promise<HandupRequest> {
  for (;;) {
    const r = await api.get<HandupRequest>(`/v1/requests/${encodeURIComponent(id)}/wait?timeout=60s`);
    if (r.status !== 'pending') return r;
  }
}

/** `wait ID`: block until the request is decided, expired or cancelled. */
export async function waitCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseOrUsage('wait', () => parseArgs({ args, options: COMMON_OPTIONS, allowPositionals: true, strict: true }));
  const [id] = expectPositionals('wait', positionals, ['id']);
  const final = await waitUntilDecided(connect(ctx, values), id!);
  if (values.json) printJson(ctx, waitJson(final));
  else ctx.out(outcome(final));
  return exitCodeForStatus(final.status);
}

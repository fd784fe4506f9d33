import { setTimeout as delay } from 'node:timers/promises';
import type { HandupRequest } from '../requests/request-schema.js';
import type { ApiClient } from './api-client.js';
import { CliError } from './cli-error.js';
import { connect, printJson, type CliContext } from './cli-context.js';
import { COMMON_OPTIONS, expectPositionals, parseCommandArgs } from './command-args.js';
import { exitCodeForStatus } from './exit-codes.js';
import { clean, outcome, waitJson } from './render.js';

const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 5_000;
/**
 * How long past a request's deadline a restarting daemon still gets: it expires overdue
 * requests as soon as it is back, so an outage longer than this is not a restart.
 */
export const RECONNECT_GRACE_MS = 60_000;

/** Failures a restart looks like from outside: no connection, or a daemon (or proxy) saying "not now". */
const TRANSIENT = new Set(['unreachable', 'shutting_down', 'http_502', 'http_503', 'http_504']);

export interface WaitOptions {
  /** The request as last seen (`ask --wait` has just created it); its deadline bounds reconnecting. */
  seen?: HandupRequest;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** Told once per outage, when the first attempt to reach the daemon fails. */
  onOutage?: (err: CliError) => void;
}

/**
 * Loops the long-poll until the request leaves pending. A wait answer may still be pending
 * (the poll timed out, or the daemon is shutting down): that is a reason to ask again, never
 * to assume an outcome. Once the request has been seen, a daemon that goes away is waited
 * for with backoff, until the request's own deadline plus RECONNECT_GRACE_MS (no deadline: no
 * limit, as waiting itself has none); a daemon that cannot be reached for that first look is
 * an error at once (a wrong --url must not hang).
 */
export async function waitUntilDecided(
  api: ApiClient,
  id: string,
  { seen, sleep = (ms) => delay(ms), now = Date.now, onOutage }: WaitOptions = {},
): Promise<HandupRequest> {
  const path = `/v1/requests/${encodeURIComponent(id)}`;
  // A quick look first: it fails fast on a wrong --url and tells the deadline before a long-poll.
  let last = seen ?? (await api.get<HandupRequest>(path));
  if (last.status !== 'pending') return last;
  let backoff = BACKOFF_FIRST_MS;
  let inOutage = false;
  for (;;) {
    let r: HandupRequest;
    try {
      r = await api.get<HandupRequest>(`${path}/wait?timeout=60s`);
    } catch (err) {
      if (!(err instanceof CliError) || !TRANSIENT.has(err.code)) throw err;
      if (last.expires_at != null && now() > last.expires_at + RECONNECT_GRACE_MS) {
        throw new CliError(err.code, `${err.message}; gave up ${RECONNECT_GRACE_MS / 1000}s after the request's deadline`);
      }
      if (!inOutage) onOutage?.(err);
      inOutage = true;
      await sleep(backoff);
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
      continue;
    }
    if (r.status !== 'pending') return r;
    last = r;
    backoff = BACKOFF_FIRST_MS;
    inOutage = false;
  }
}

/** The WaitOptions of a command run in `ctx`: its clock and pauses, and one stderr line per outage. */
export function waitOptionsFor(ctx: CliContext, seen?: HandupRequest): WaitOptions {
  return {
    ...(seen ? { seen } : {}),
    ...(ctx.sleep ? { sleep: ctx.sleep } : {}),
    ...(ctx.now ? { now: ctx.now } : {}),
    onOutage: (err) => ctx.err(`countersign: ${clean(err.code)}: ${clean(err.message)}; retrying until the daemon is back\n`),
  };
}

/** `wait ID`: block until the request is decided, expired or cancelled. */
export async function waitCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('wait', args, COMMON_OPTIONS);
  const [id] = expectPositionals('wait', positionals, ['id']);
  const final = await waitUntilDecided(connect(ctx, values), id!, waitOptionsFor(ctx));
  if (values.json) printJson(ctx, waitJson(final));
  else ctx.out(outcome(final));
  return exitCodeForStatus(final.status);
}

import { Agent, fetch as undiciFetch } from 'undici';
import { parseDuration } from '../lib/durations.js';
import { readGitContext } from '../formats/git-context.js';
import { createApiClient, type Fetch } from './api-client.js';
import { CliError, usageError } from './cli-error.js';
import type { CliContext } from './cli-context.js';
import { resolveClientSettings } from './client-settings.js';
import { COMMON_OPTIONS, expectPositionals, parseCommandArgs } from './command-args.js';
import { EXIT_OK } from './exit-codes.js';

const HOOK_PATH = '/v1/formats/claude-code/hook';
const ON_ERROR = ['ask', 'deny', 'allow'] as const;
type OnError = (typeof ON_ERROR)[number];

/**
 * What the hook prints when countersign cannot answer (daemon down, bad token, bad input):
 * `ask` lets Claude Code prompt locally, so a stopped broker neither approves silently nor blocks
 * all work; `deny` refuses; `allow` lets the call through (the operator's explicit choice), but
 * only in an outage (isOutage).
 */
export function fallbackOutput(event: string | undefined, mode: OnError, reason: string): Record<string, unknown> {
  // Input that names no event is answered as the tool call it most likely was (docs/cli.md):
  // `{}` would let Claude Code's own rules run the call whatever --on-error says.
  if (event === 'PreToolUse' || event === undefined) {
    return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: mode, permissionDecisionReason: reason } };
  }
  if (event === 'PermissionRequest') {
    if (mode === 'ask') return {};
    return { hookSpecificOutput: { hookEventName: event, decision: mode === 'allow' ? { behavior: 'allow' } : { behavior: 'deny', message: reason } } };
  }
  // Follow-up hooks decide nothing: there is nothing to fall back to.
  return {};
}

const HOOK_OPTIONS = { ...COMMON_OPTIONS, wait: { type: 'string' }, 'on-wait': { type: 'string' }, 'on-error': { type: 'string' } } as const;

/** The command line, checked; a mistake is a message, answered like any other error. */
function hookSettings(args: string[]) {
  const { values, positionals } = parseCommandArgs('hook', args, HOOK_OPTIONS);
  const [agent] = expectPositionals('hook', positionals, ['agent']);
  if (agent !== 'claude-code') throw usageError(`hook: unknown agent "${agent}" (only claude-code)`);
  const onWait = values['on-wait'];
  if (onWait !== undefined && onWait !== 'ask' && onWait !== 'deny') throw usageError('hook: --on-wait must be ask or deny');
  const wait = values.wait ?? '55s';
  const waited = parseDuration(wait);
  if (!waited.ok) throw usageError(`hook: --wait: ${waited.message}`);
  return { values, onWait, wait, waitMs: waited.ms };
}

/** `--on-error` read on its own, so a mistake elsewhere on the line is still answered as asked. */
function onErrorOf(args: string[]): { mode: OnError; problem?: string } {
  const i = args.findIndex((a) => a === '--on-error' || a.startsWith('--on-error='));
  if (i < 0) return { mode: 'ask' };
  const value = args[i]!.includes('=') ? args[i]!.slice(args[i]!.indexOf('=') + 1) : args[i + 1];
  if (ON_ERROR.includes(value as OnError)) return { mode: value as OnError };
  // Unreadable: the documented default, never an allow the operator did not write.
  return { mode: 'ask', problem: `hook: --on-error must be one of ${ON_ERROR.join(', ')}` };
}

/**
 * `hook claude-code [--wait 55s] [--on-wait ask|deny] [--on-error ask|deny|allow]`: Claude Code's
 * command hook. Reads the hook JSON on stdin, sends it to the daemon's hook endpoint (adding the
 * repo and branch of the git work tree at `cwd`, read here on the agent's machine), prints the
 * hook output, and exits 0 whatever happened: Claude Code takes any other exit code as a hook
 * that failed and carries on without it, so even a mistyped command line answers as
 * `--on-error` says.
 */
export async function hookCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { mode: onError, problem } = onErrorOf(args);
  let settings: ReturnType<typeof hookSettings> | undefined;
  let usage = problem;
  try {
    settings = hookSettings(args);
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    usage ??= err.message;
  }

  const input = await ctx.readStdin();
  let frame: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(input);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) frame = parsed as Record<string, unknown>;
  } catch {
    // reported below
  }
  const event = typeof frame?.hook_event_name === 'string' ? frame.hook_event_name : undefined;
  const fallBack = (why: string, mode: OnError = onError) => {
    ctx.err(`countersign: ${why}; answering ${mode}\n`);
    ctx.out(`${JSON.stringify(fallbackOutput(event, mode, `countersign could not decide: ${why}`))}\n`);
    return EXIT_OK;
  };
  if (usage !== undefined || settings === undefined) return fallBack(usage ?? 'hook: bad command line');
  if (!frame) return fallBack('the hook input on stdin is not a JSON object');
  if (event === undefined) return fallBack('the hook input on stdin has no hook_event_name');
  const { values, onWait, wait, waitMs } = settings;

  try {
    const { url, token } = resolveClientSettings(values, ctx.env, { cwd: ctx.cwd, readFile: ctx.readFile });
    const query = new URLSearchParams({ wait });
    if (onWait) query.set('on_wait', onWait);
    const git = typeof frame.cwd === 'string' ? await readGitContext(frame.cwd) : null;
    if (git?.repo) query.set('repo', git.repo);
    if (git?.branch) query.set('branch', git.branch);
    // The daemon holds the call up to --wait: the client must not give up first (undici's default is 5 minutes).
    const holdMs = Math.min(waitMs, 10 * 60_000) + 60_000;
    const fetchFn = ctx.fetch ?? longFetch(holdMs);
    const output = await createApiClient({ baseUrl: url, token, fetch: fetchFn }).post<unknown>(`${HOOK_PATH}?${query}`, frame);
    ctx.out(`${JSON.stringify(output)}\n`);
    return EXIT_OK;
  } catch (err) {
    const why = err instanceof CliError ? `${err.code}: ${err.message}` : `internal_error: ${(err as Error).message}`;
    // `allow` is for an outage only. Anything else the agent may have brought about (input the
    // daemon refused, or could not even be sent: too large, nested too deep) never lets the call through.
    return fallBack(why, onError === 'allow' && !(err instanceof CliError && isOutage(err)) ? 'ask' : onError);
  }
}

// No connection at all: the daemon is down, or not where the settings say.
const DOWN = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * Whether countersign could not answer for reasons of its own: no connection, or the daemon (or
 * a proxy before it) unavailable (502, 503, 504). Not a refusal of this call (400, 409, 413,
 * 429, …), a token refused (401, 403: the token may come from a file in the agent's own working
 * directory, `data/admin-token`, which the agent can write), a connection cut while the call was
 * being sent (the daemon closing on an oversized body), or a call that could not be made.
 */
function isOutage(err: CliError): boolean {
  if (err.status !== undefined) return [502, 503, 504].includes(err.status);
  return err.code === 'unreachable' && err.network !== undefined && DOWN.has(err.network);
}

function longFetch(holdMs: number): Fetch {
  const dispatcher = new Agent({ headersTimeout: holdMs, bodyTimeout: holdMs });
  return ((url: string, init?: Parameters<Fetch>[1]) => undiciFetch(url, { ...(init as object), dispatcher })) as unknown as Fetch;
}

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
 * all work; `deny` refuses; `allow` lets the call through (the operator's explicit choice).
 */
export function fallbackOutput(event: string | undefined, mode: OnError, reason: string): Record<string, unknown> {
  if (event === 'PreToolUse') {
    return { hookSpecificOutput: { hookEventName: event, permissionDecision: mode, permissionDecisionReason: reason } };
  }
  if (event === 'PermissionRequest') {
    if (mode === 'ask') return {};
    return { hookSpecificOutput: { hookEventName: event, decision: mode === 'allow' ? { behavior: 'allow' } : { behavior: 'deny', message: reason } } };
  }
  // Follow-up hooks decide nothing: there is nothing to fall back to.
  return {};
}

/**
 * `hook claude-code [--wait 55s] [--on-wait ask|deny] [--on-error ask|deny|allow]`: Claude Code's
 * command hook. Reads the hook JSON on stdin, sends it to the daemon's hook endpoint (adding the
 * repo and branch of the git work tree at `cwd`, read here on the agent's machine), prints the
 * hook output, and exits 0 whatever happened.
 */
export async function hookCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('hook', args, {
    ...COMMON_OPTIONS,
    wait: { type: 'string' },
    'on-wait': { type: 'string' },
    'on-error': { type: 'string' },
  });
  const [agent] = expectPositionals('hook', positionals, ['agent']);
  if (agent !== 'claude-code') throw usageError(`hook: unknown agent "${agent}" (only claude-code)`);
  const onError = (values['on-error'] ?? 'ask') as OnError;
  if (!ON_ERROR.includes(onError)) throw usageError(`hook: --on-error must be one of ${ON_ERROR.join(', ')}`);
  const onWait = values['on-wait'];
  if (onWait !== undefined && onWait !== 'ask' && onWait !== 'deny') throw usageError('hook: --on-wait must be ask or deny');
  const wait = values.wait ?? '55s';
  const waited = parseDuration(wait);
  if (!waited.ok) throw usageError(`hook: --wait: ${waited.message}`);

  const input = await ctx.readStdin();
  let frame: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(input);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) frame = parsed as Record<string, unknown>;
  } catch {
    // reported below
  }
  const event = typeof frame?.hook_event_name === 'string' ? frame.hook_event_name : undefined;
  const fallBack = (why: string) => {
    ctx.err(`countersign: ${why}; answering ${onError}\n`);
    ctx.out(`${JSON.stringify(fallbackOutput(event, onError, `countersign could not decide: ${why}`))}\n`);
    return EXIT_OK;
  };
  if (!frame) return fallBack('the hook input on stdin is not a JSON object');

  try {
    const { url, token } = resolveClientSettings(values, ctx.env, { cwd: ctx.cwd, readFile: ctx.readFile });
    const query = new URLSearchParams({ wait });
    if (onWait) query.set('on_wait', onWait);
    const git = typeof frame.cwd === 'string' ? await readGitContext(frame.cwd) : null;
    if (git?.repo) query.set('repo', git.repo);
    if (git?.branch) query.set('branch', git.branch);
    // The daemon holds the call up to --wait: the client must not give up first (undici's default is 5 minutes).
    const holdMs = Math.min(waited.ms, 10 * 60_000) + 60_000;
    const fetchFn = ctx.fetch ?? longFetch(holdMs);
    const output = await createApiClient({ baseUrl: url, token, fetch: fetchFn }).post<unknown>(`${HOOK_PATH}?${query}`, frame);
    ctx.out(`${JSON.stringify(output)}\n`);
    return EXIT_OK;
  } catch (err) {
    if (err instanceof CliError) return fallBack(`${err.code}: ${err.message}`);
    return fallBack(`internal_error: ${(err as Error).message}`);
  }
}

function longFetch(holdMs: number): Fetch {
  const dispatcher = new Agent({ headersTimeout: holdMs, bodyTimeout: holdMs });
  return ((url: string, init?: Parameters<Fetch>[1]) => undiciFetch(url, { ...(init as object), dispatcher })) as unknown as Fetch;
}

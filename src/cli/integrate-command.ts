import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseDuration } from '../lib/durations.js';
import { CliError, usageError } from './cli-error.js';
import { connect, type CliContext } from './cli-context.js';
import { localDaemonUrl } from './client-settings.js';
import { COMMON_OPTIONS, expectPositionals, parseCommandArgs } from './command-args.js';
import { EXIT_OK } from './exit-codes.js';

const HOOK_PATH = '/v1/formats/claude-code/hook';
const COMMAND = 'countersign hook claude-code';
const DEFAULT_MATCHER = 'Bash|Edit|Write';
/** The hook events that ask, by the name `--event` takes. */
const EVENTS = { 'pre-tool-use': 'PreToolUse', 'permission-request': 'PermissionRequest' } as const;

type Handler = Record<string, unknown>;
type Group = { matcher?: string; hooks: Handler[] };
type HooksBlock = Record<string, Group[]>;

export interface IntegrationOptions {
  mode: 'http' | 'command';
  url: string;
  /** Given only when the user named one: a command hook otherwise finds the daemon as the CLI does. */
  explicitUrl: boolean;
  matcher: string;
  event: (typeof EVENTS)[keyof typeof EVENTS];
  waitSeconds: number;
  followUps: boolean;
}

/**
 * The `hooks` block of `.claude/settings.json` (docs/formats/claude-code.md): the asking hook with the matcher,
 * and follow-up hooks (the call went ahead, failed, or the session ended) that end what no longer
 * waits. The HTTP form reads the token from `$COUNTERSIGN_TOKEN` (`allowedEnvVars`); nothing
 * secret is written into the file.
 */
export function claudeCodeHooks(o: IntegrationOptions): HooksBlock {
  // Claude Code must not give up on the hook before the daemon answers it.
  const timeout = o.waitSeconds + 10;
  const http = (query: string, t: number): Handler => ({
    type: 'http',
    url: `${o.url}${HOOK_PATH}${query}`,
    timeout: t,
    headers: { Authorization: 'Bearer $COUNTERSIGN_TOKEN' },
    allowedEnvVars: ['COUNTERSIGN_TOKEN'],
  });
  const urlFlag = o.explicitUrl ? ` --url ${o.url}` : '';
  const command = (flags: string, t: number): Handler => ({ type: 'command', command: `${COMMAND}${urlFlag}${flags}`, timeout: t });
  const asking = o.mode === 'http' ? http(`?wait=${o.waitSeconds}s`, timeout) : command(` --wait ${o.waitSeconds}s`, timeout);
  const followUp = o.mode === 'http' ? http('', 30) : command('', 30);
  const block: HooksBlock = { [o.event]: [{ matcher: o.matcher, hooks: [asking] }] };
  if (o.followUps) {
    block.PostToolUse = [{ matcher: o.matcher, hooks: [followUp] }];
    block.PostToolUseFailure = [{ matcher: o.matcher, hooks: [followUp] }];
    block.SessionEnd = [{ hooks: [followUp] }];
  }
  return block;
}

/** A handler this command wrote earlier (either form): replaced, never duplicated, on a re-run. */
function isOurs(h: Handler): boolean {
  return (typeof h.url === 'string' && h.url.includes(HOOK_PATH)) || (typeof h.command === 'string' && h.command.startsWith(COMMAND));
}

/**
 * `settings` with `block` merged in: every other key, event and hook is kept; handlers this
 * command wrote before are removed first (groups left empty go too).
 */
export function mergeSettings(settings: Record<string, unknown>, block: HooksBlock): Record<string, unknown> {
  const existing = settings.hooks;
  if (existing !== undefined && (existing === null || typeof existing !== 'object' || Array.isArray(existing))) {
    throw new CliError('bad_settings', '"hooks" in the settings file is not an object');
  }
  const hooks: Record<string, unknown> = { ...((existing as Record<string, unknown>) ?? {}) };
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    const kept = groups
      .map((g: unknown) => {
        const group = g as Group;
        if (!group || typeof group !== 'object' || !Array.isArray(group.hooks)) return group;
        return { ...group, hooks: group.hooks.filter((h) => !(h && typeof h === 'object' && isOurs(h))) };
      })
      .filter((g: unknown) => !(g && typeof g === 'object' && Array.isArray((g as Group).hooks) && (g as Group).hooks.length === 0));
    if (kept.length) hooks[event] = kept;
    else delete hooks[event];
  }
  for (const [event, groups] of Object.entries(block)) {
    // Replacing a value that is not a list would drop the hooks it holds, unseen.
    if (hooks[event] !== undefined && !Array.isArray(hooks[event])) {
      throw new CliError('bad_settings', `"hooks.${event}" in the settings file is not a list; nothing was written`);
    }
    const current = (hooks[event] as unknown[] | undefined) ?? [];
    hooks[event] = [...current, ...groups];
  }
  return { ...settings, hooks };
}

/**
 * `integrate claude-code [--http|--command] [--matcher M] [--event pre-tool-use|permission-request]
 * [--wait 55s] [--no-follow-ups] [--token-name NAME] [--write FILE]`: prints the hooks block for
 * `.claude/settings.json`, or merges it into FILE. `--token-name` creates that submit token
 * (admin token needed) and prints it once, on stderr.
 */
export async function integrateCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('integrate', args, {
    ...COMMON_OPTIONS,
    http: { type: 'boolean' },
    command: { type: 'boolean' },
    matcher: { type: 'string' },
    event: { type: 'string' },
    wait: { type: 'string' },
    'no-follow-ups': { type: 'boolean' },
    'token-name': { type: 'string' },
    write: { type: 'string' },
  });
  const [agent] = expectPositionals('integrate', positionals, ['agent']);
  if (agent !== 'claude-code') throw usageError(`integrate: unknown agent "${agent}" (only claude-code)`);
  if (values.http && values.command) throw usageError('integrate: choose --http or --command, not both');
  const eventName = values.event ?? 'pre-tool-use';
  if (!Object.hasOwn(EVENTS, eventName)) throw usageError(`integrate: --event must be one of ${Object.keys(EVENTS).join(', ')}`);
  const wait = parseDuration(values.wait ?? '55s', { max: 10 * 60_000 });
  if (!wait.ok) throw usageError(`integrate: --wait: ${wait.message}`);
  if (wait.ms < 1000) throw usageError('integrate: --wait must be at least 1s');
  const matcher = values.matcher ?? DEFAULT_MATCHER;
  if (!matcher.trim()) throw usageError('integrate: --matcher must not be empty');

  const url = (values.url ?? ctx.env.url ?? localDaemonUrl(ctx.env.port)).replace(/\/+$/, '');
  const block = claudeCodeHooks({
    mode: values.command ? 'command' : 'http',
    url,
    explicitUrl: values.url !== undefined,
    matcher,
    event: EVENTS[eventName as keyof typeof EVENTS],
    waitSeconds: Math.ceil(wait.ms / 1000),
    followUps: !values['no-follow-ups'],
  });

  // The settings file is read and merged first: one it cannot take stops the command before a
  // token is created, so "nothing was written" holds and a re-run can use the same name.
  const file = values.write === undefined ? undefined : resolve(ctx.cwd, values.write);
  const merged = file === undefined ? undefined : mergeSettings(readSettings(file), block);

  if (values['token-name'] !== undefined) {
    const created = await connect(ctx, values).post<{ name: string; token: string }>('/v1/tokens', { name: values['token-name'] });
    ctx.err(
      `Created submit token "${created.name}". It is shown only this once; set it where Claude Code runs:\n  export COUNTERSIGN_TOKEN=${created.token}\n`,
    );
  }

  if (file === undefined || merged === undefined) {
    ctx.out(`${JSON.stringify({ hooks: block }, null, 2)}\n`);
    return EXIT_OK;
  }
  // A settings file that is a symlink (into a dotfiles repository) is written where it points:
  // renaming onto the link itself would replace it with a copy.
  const target = existsSync(file) ? realpathSync(file) : file;
  mkdirSync(dirname(target), { recursive: true });
  // Written aside and renamed, so an interrupted write never leaves a half file.
  const tmp = `${target}.countersign-${process.pid}.tmp`;
  // The copy keeps the file's permissions: settings may hold secrets (`env`) in a 0600 file.
  const mode = existsSync(target) ? statSync(target).mode & 0o7777 : undefined;
  writeFileSync(tmp, `${JSON.stringify(merged, null, 2)}\n`, mode === undefined ? {} : { mode: 0o600 });
  if (mode !== undefined) chmodSync(tmp, mode);
  renameSync(tmp, target);
  ctx.out(`wrote the Claude Code hooks to ${file}${values.command ? '' : ' (the HTTP hooks read the token from $COUNTERSIGN_TOKEN)'}\n`);
  return EXIT_OK;
}

/** The settings object in `file` ({} when there is none yet); anything else is bad_settings. */
function readSettings(file: string): Record<string, unknown> {
  if (!existsSync(file)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CliError('bad_settings', `${file} is not valid JSON (${(err as Error).message}); nothing was written`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new CliError('bad_settings', `${file} does not hold a JSON object; nothing was written`);
  return parsed as Record<string, unknown>;
}

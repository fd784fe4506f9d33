import { quoteArgv } from '../lib/shell-quote.js';
import type { HandupRequest } from '../requests/request-schema.js';

/** What rule matchers look at in a request, read once per request. */
export interface RequestFacts {
  agent: string | null;
  session: string | null;
  integration: string | null;
  format: string;
  kind: string;
  risk: string;
  tool: string | null;
  cwd: string | null;
  repo: string | null;
  /** Every command the request shows (commandLines); empty when it shows none. */
  commands: string[];
  title: string;
  /** The request shows more than its title (showsBeyondTitle; scope-rule's titleNamesAction). */
  beyondTitle: boolean;
  /**
   * The request shows commands and nothing a command would run or change: every preview is a
   * command, or JSON that only restates one (commandArguments). What a remembered command may pass.
   */
  commandsOnly: boolean;
}

/**
 * Every command the request shows, each as one line of text: a command preview's `shell`
 * string, else its `argv` joined by single spaces, else its inline text; trimmed, in preview
 * order, without repeats.
 * A preview whose `shell` and `argv` say different things counts as both: the reviewer (or a
 * rule) must not pass one while the agent runs the other.
 */
export function commandLines(record: Pick<HandupRequest, 'previews'>): string[] {
  const lines: string[] = [];
  for (const p of record.previews ?? []) {
    if (p.type !== 'command') continue;
    const shell = typeof p.command?.shell === 'string' ? p.command.shell.trim() : '';
    const argv = Array.isArray(p.command?.argv) ? p.command.argv.join(' ').trim() : '';
    for (const text of [shell, argv, inlineCommand(p)]) if (text && !lines.includes(text)) lines.push(text);
  }
  return lines;
}

/**
 * A command preview without `shell` or `argv` shows its inline text as the command (the inbox
 * prints it after `$`, the CLI and the decision link show it too), so rules read it as one:
 * otherwise a remembered title would pass `curl … | sh` shown as a command.
 */
function inlineCommand(p: NonNullable<HandupRequest['previews']>[number]): string {
  const c = p.command;
  if (typeof c?.shell === 'string' || Array.isArray(c?.argv) || typeof p.inline !== 'string') return '';
  return p.inline.trim();
}

/**
 * The command each command preview shows a person: its `shell` string, else its `argv` with each
 * word that is not plain quoted (quoteArgv, as the inbox shows it); trimmed, blank ones left out,
 * without repeats. What a scoped approval remembers: the `shell` line a preview leads with, not
 * an `argv` beside it (shown only as a note when the two differ; a later request must still pass
 * with both); and an argv joined by bare spaces would be a shell line that runs something else
 * (`["echo", "x; curl … | sh"]`).
 */
export function shownCommands(record: Pick<HandupRequest, 'previews'>): string[] {
  const lines: string[] = [];
  for (const p of record.previews ?? []) {
    if (p.type !== 'command') continue;
    const { shell, argv } = p.command ?? {};
    const text = (typeof shell === 'string' ? shell : Array.isArray(argv) ? quoteArgv(argv) : inlineCommand(p)).trim();
    if (text && !lines.includes(text)) lines.push(text);
  }
  return lines;
}

/**
 * What an approving option may say without saying what it approves: the usual words of the
 * formats' own options. Any other label ("Yes, drop the production database") is part of what
 * the reviewer read, beside the title.
 */
export const PLAIN_APPROVALS = new Set([
  'approve',
  'approved',
  'allow',
  'allow once',
  'always allow',
  'allow always',
  'allow for this session',
  'accept',
  'accept for session',
  'yes',
  'ok',
  'okay',
  'confirm',
  'continue',
  'proceed',
  'go ahead',
  'submit',
  'agree',
  'grant',
  'permit',
  'run',
  'accept for this session',
  // ALP's own Vietnamese options
  'cho phép',
  'cho phép lần này',
  'luôn cho phép',
  'duyệt',
]);
const labelWords = (label: string) =>
  label
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/** The request shows more than its title: a summary, a preview, or an approving option that says more than "Allow". */
export function showsBeyondTitle(record: Pick<HandupRequest, 'summary' | 'previews' | 'options'>): boolean {
  return (
    Boolean(record.summary) ||
    (record.previews?.length ?? 0) > 0 ||
    record.options.some((o) => o.outcome === 'approve' && !PLAIN_APPROVALS.has(labelWords(o.label)))
  );
}

/** The record's `tool`, else `input.tool`, else `input.tool_name` (agents name it either way). */
export function requestTool(record: Pick<HandupRequest, 'tool' | 'input'>): string | null {
  if (typeof record.tool === 'string' && record.tool) return record.tool;
  const input = record.input as Record<string, unknown> | null;
  for (const key of ['tool', 'tool_name']) {
    const v = input?.[key];
    if (typeof v === 'string' && v) return v;
  }
  return null;
}

/**
 * The arguments a shell call may carry beside its command without changing what runs: how it is
 * described, how long it may take, whether its output is awaited (Claude Code's Bash, Ask's shell
 * tools), the id of the call and the runner's reason for it (PaperClip's details).
 */
const INERT_ARGUMENTS: Readonly<Record<string, string>> = {
  reason: 'string',
  description: 'string',
  timeout: 'number',
  run_in_background: 'boolean',
  toolCallId: 'string',
};

/**
 * Whether a JSON preview only restates a command the request shows: an object of at most a
 * `command` (one of `commands`) and INERT_ARGUMENTS, as Ask shows a shell call's arguments and
 * Claude Code the input its command preview leaves out. Anything else there (an environment, a
 * working directory, a sandbox switch, a file) changes what runs, and a person who approved the
 * command never saw it.
 */
function commandArguments(p: NonNullable<HandupRequest['previews']>[number], commands: readonly string[]): boolean {
  if (p.type !== 'json' || typeof p.inline !== 'string') return false;
  let value: unknown;
  try {
    value = JSON.parse(p.inline);
  } catch {
    return false;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.entries(value).every(([key, v]) =>
    key === 'command' ? typeof v === 'string' && commands.includes(v.trim()) : Object.hasOwn(INERT_ARGUMENTS, key) && typeof v === INERT_ARGUMENTS[key],
  );
}

export function requestFacts(record: HandupRequest, format: string): RequestFacts {
  const s = record.source;
  const commands = commandLines(record);
  return {
    agent: s?.agent ?? null,
    session: s?.session ?? null,
    integration: s?.integration ?? null,
    format,
    kind: record.kind,
    risk: record.risk,
    tool: requestTool(record),
    cwd: s?.cwd ?? null,
    repo: s?.repo ?? null,
    commands,
    title: record.title,
    beyondTitle: showsBeyondTitle(record),
    commandsOnly: (record.previews ?? []).every((p) => p.type === 'command' || commandArguments(p, commands)),
  };
}

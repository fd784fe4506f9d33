import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../lib/canonical-json.js';
import { AppError } from '../lib/errors.js';
import type { CreateRequestBody, HandupRequest, Option, Risk } from '../requests/request-schema.js';
import type { FollowUp, FrameContext, Normalized, WireAdapter } from './adapter.js';
import { codeLanguage } from './code-language.js';
import { unifiedDiff } from './unified-diff.js';
import { truncateBytes } from '../lib/truncate-bytes.js';

/**
 * Claude Code hooks (docs/formats/claude-code.md): the JSON Claude Code sends to a `PreToolUse` or
 * `PermissionRequest` hook is the frame, and the reply is the hook output Claude Code reads back.
 * The same JSON reaches the hook endpoint (`POST /v1/formats/claude-code/hook`), which holds the
 * answer until the request ends; this file only translates.
 */

export const FORMAT = 'claude-code';

/** The hook events that ask for a decision. */
export const ASKING_EVENTS = ['PreToolUse', 'PermissionRequest'] as const;
export type AskingEvent = (typeof ASKING_EVENTS)[number];
/** Hook events about one tool call that say it no longer waits for a decision here. */
const TOOL_FOLLOW_UPS = new Set(['PostToolUse', 'PostToolUseFailure', 'PermissionDenied']);
const TOOL_EVENTS = new Set<string>([...ASKING_EVENTS, ...TOOL_FOLLOW_UPS]);

export const isAskingEvent = (event: string): event is AskingEvent => (ASKING_EVENTS as readonly string[]).includes(event);

// ---- Frames, in Claude Code's own field names (unknown fields are kept, as Claude Code adds them) ----

/** Every hook's input: the common fields, plus the tool fields of tool events. */
export const ClaudeCodeHookSchema = z
  .looseObject({
    session_id: z.string().min(1).max(512),
    transcript_path: z.string().max(4096).optional(),
    cwd: z.string().max(4096).optional(),
    permission_mode: z.string().max(64).optional(),
    hook_event_name: z.string().min(1).max(64),
    tool_name: z.string().min(1).max(512).optional(),
    tool_input: z.record(z.string(), z.unknown()).optional(),
    tool_use_id: z.string().min(1).max(256).optional(),
  })
  .superRefine((f, ctx) => {
    if (!TOOL_EVENTS.has(f.hook_event_name)) return;
    if (f.tool_name === undefined) ctx.addIssue({ code: 'custom', message: `a ${f.hook_event_name} hook carries tool_name`, path: ['tool_name'] });
    if (f.tool_input === undefined) ctx.addIssue({ code: 'custom', message: `a ${f.hook_event_name} hook carries tool_input`, path: ['tool_input'] });
  });
export type ClaudeCodeHook = z.infer<typeof ClaudeCodeHookSchema>;
type ToolHook = ClaudeCodeHook & { tool_name: string; tool_input: Record<string, unknown> };

export interface ClaudeCodeContext {
  /** The hook event that created the request: its reply is that event's output. */
  event: AskingEvent;
  /** The tool input as Claude Code sent it: an approval with edited input answers the whole input. */
  toolInput: Record<string, unknown>;
}

const OPTIONS: Option[] = [
  { id: 'allow', label: 'Allow', outcome: 'approve', style: 'primary' },
  { id: 'deny', label: 'Deny', outcome: 'deny', style: 'danger' },
];

// ---- Native key ----

/**
 * `claude-code:<tool_use_id>`, or, for hooks without one (PermissionRequest), a hash of the session,
 * tool and input: the same call asked again maps to the same request and gets its decision.
 */
function nativeKey(f: ToolHook): string {
  return f.tool_use_id !== undefined ? `${FORMAT}:${f.tool_use_id}` : inputKey(f);
}

function inputKey(f: ToolHook): string {
  const canonical = canonicalJson({ session_id: f.session_id, tool_name: f.tool_name, tool_input: f.tool_input }) ?? '';
  return `${FORMAT}:sha256:${createHash('sha256').update(canonical).digest('hex')}`;
}

// ---- Tool → record ----

const TITLE_MAX_BYTES = 512;
const shortTitle = (text: string) => truncateBytes(text, TITLE_MAX_BYTES);
const EDIT_TOOLS = new Set(['Edit', 'MultiEdit', 'Write', 'NotebookEdit']);

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Windows paths (a drive letter or backslashes) compare case-insensitively with either slash. */
function isWindowsPath(p: string): boolean {
  return /^[a-zA-Z]:[\\/]/.test(p) || p.startsWith('\\\\');
}

/** `file` relative to `cwd` when it lies inside it; null when outside or either is unknown. */
export function insideCwd(file: string, cwd: string | undefined): string | null {
  if (!cwd) return null;
  const win = isWindowsPath(cwd) || isWindowsPath(file);
  const norm = (p: string) => (win ? p.replace(/\\/g, '/').toLowerCase() : p);
  const base = norm(cwd).replace(/\/+$/, '');
  const target = norm(file);
  if (!target.startsWith(`${base}/`)) return null;
  const rest = file.slice(base.length + 1);
  // "a/../../etc" starts with cwd but leaves it.
  return rest.split(/[\\/]/).includes('..') ? null : rest;
}

interface Shown {
  title: string;
  kind: NonNullable<CreateRequestBody['kind']>;
  previews: NonNullable<CreateRequestBody['previews']>;
  risk: Risk;
}

const jsonPreview = (input: Record<string, unknown>): Shown['previews'][number] => ({
  type: 'json',
  title: 'Tool input',
  inline: JSON.stringify(input, null, 2),
});

/**
 * The input a tool's own preview does not show, as JSON: whatever else Claude Code runs the call
 * with (Bash's `dangerouslyDisableSandbox`, `run_in_background`, a `timeout`) is shown too, and so
 * part of the content hash a decision echoes and what a replay must repeat.
 */
function otherInput(input: Record<string, unknown>, shown: readonly string[]): Shown['previews'] {
  const rest = Object.fromEntries(Object.entries(input).filter(([k]) => !shown.includes(k)));
  return Object.keys(rest).length === 0 ? [] : [{ type: 'json', title: 'Other input', inline: JSON.stringify(rest, null, 2) }];
}

/** What the reviewer sees for each tool family (docs/formats/claude-code.md, "From hook JSON to Request"). */
function show(f: ToolHook): Shown {
  const { tool_name: tool, tool_input: input, cwd } = f;
  if (tool === 'Bash') {
    const command = str(input.command);
    // A Bash call shows its command: one that is missing or not text would show the reviewer an empty one.
    if (command === undefined || command.trim() === '')
      throw new AppError('invalid_frame', 'tool_input.command: a Bash hook needs the command, a non-empty string');
    const firstLine = command
      .split(/\r?\n/)
      .find((l) => l.trim() !== '')
      ?.trim();
    return {
      title: firstLine ? shortTitle(firstLine) : 'Bash',
      kind: 'command',
      previews: [{ type: 'command', command: { shell: command, ...(cwd ? { cwd } : {}) } }, ...otherInput(input, ['command', 'description'])],
      // Outside the sandbox a command can reach anything the user can.
      risk: input.dangerouslyDisableSandbox === true ? 'high' : 'medium',
    };
  }
  if (EDIT_TOOLS.has(tool)) {
    const file = str(input.file_path) ?? str(input.notebook_path);
    if (file !== undefined) {
      const relative = insideCwd(file, cwd);
      const shownPath = relative ?? file;
      // A notebook cell edit is no text edit a diff could show (a cell inserted, replaced or
      // deleted): "anything else", its input as JSON.
      const notebook = tool === 'NotebookEdit';
      return {
        title: shortTitle(`Edit ${shownPath}`),
        kind: notebook ? 'custom' : 'edit',
        previews: notebook ? [jsonPreview(input)] : editPreviews(tool, input, shownPath),
        // Edits inside the project are routine; a write outside it is worth a closer look.
        risk: relative === null ? 'medium' : 'low',
      };
    }
  }
  if (tool === 'WebFetch' && str(input.url)) {
    const url = str(input.url)!;
    return {
      title: shortTitle(`Fetch ${url}`),
      kind: 'custom',
      previews: [{ type: 'text', title: 'URL', inline: url }, ...otherInput(input, ['url'])],
      risk: 'low',
    };
  }
  if (tool === 'WebSearch' && str(input.query)) {
    return {
      title: tool,
      kind: 'custom',
      previews: [{ type: 'text', title: 'Query', inline: str(input.query)! }, ...otherInput(input, ['query'])],
      risk: 'low',
    };
  }
  const mcp = /^mcp__(.+?)__(.+)$/.exec(tool);
  const title = mcp ? `${mcp[1]}: ${mcp[2]}` : tool;
  return { title: shortTitle(title), kind: 'custom', previews: [jsonPreview(input)], risk: 'low' };
}

/** Edit/MultiEdit: a unified diff of the replaced strings; Write: the new content; else the input. */
function editPreviews(tool: string, input: Record<string, unknown>, path: string): Shown['previews'] {
  if (tool === 'Edit' && typeof input.old_string === 'string' && typeof input.new_string === 'string') {
    // The diff shows one replacement; with replace_all every occurrence in the file changes.
    const title = input.replace_all === true ? `${path} (every occurrence: replace_all)` : path;
    return [
      { type: 'diff', title, inline: unifiedDiff(path, [{ oldText: input.old_string, newText: input.new_string }]) },
      ...otherInput(input, ['file_path', 'old_string', 'new_string', 'replace_all']),
    ];
  }
  if (tool === 'MultiEdit' && Array.isArray(input.edits)) {
    const edits = input.edits.filter(
      (e): e is { old_string: string; new_string: string } => typeof e?.old_string === 'string' && typeof e?.new_string === 'string',
    );
    if (edits.length === input.edits.length && edits.length > 0) {
      const everywhere = edits.some((e) => (e as { replace_all?: unknown }).replace_all === true);
      return [
        {
          type: 'diff',
          // Each diff shows one replacement; an edit with replace_all changes every occurrence.
          title: everywhere ? `${path} (some edits change every occurrence: replace_all)` : path,
          inline: unifiedDiff(
            path,
            edits.map((e) => ({ oldText: e.old_string, newText: e.new_string })),
          ),
        },
        ...otherInput(input, ['file_path', 'edits']),
      ];
    }
  }
  if (tool === 'Write' && typeof input.content === 'string') {
    return [{ type: 'code', title: path, lang: codeLanguage(path), inline: input.content }, ...otherInput(input, ['file_path', 'content'])];
  }
  return [jsonPreview(input)];
}

function unsupported(event: string): never {
  throw new AppError('unsupported_frame', `hook event "${event}" asks nothing of a reviewer; countersign takes PreToolUse and PermissionRequest hooks`);
}

function normalize(frame: ClaudeCodeHook, ctx: FrameContext): Normalized<ClaudeCodeContext> {
  const event = frame.hook_event_name;
  if (!isAskingEvent(event)) unsupported(event);
  const f = frame as ToolHook;
  const shown = show(f);
  const description = str(f.tool_input.description)?.trim();
  // repo and branch come from the caller (the hook route reads the work tree; it is I/O).
  const repo = ctx.query.repo?.trim();
  const branch = ctx.query.branch?.trim();
  const key = nativeKey(f);
  return {
    request: {
      title: shown.title,
      summary: description ? description : null,
      tool: f.tool_name,
      kind: shown.kind,
      risk: shown.risk,
      source: {
        agent: 'claude-code',
        session: f.session_id,
        ...(f.cwd ? { cwd: f.cwd } : {}),
        ...(repo ? { repo } : {}),
        ...(branch ? { branch } : {}),
      },
      previews: shown.previews,
      options: OPTIONS,
      dedupe_key: key,
    },
    nativeKey: key,
    context: { event, toolInput: f.tool_input },
  };
}

// ---- Record → hook output ----

/** What a hook answers while its request is still pending when the wait runs out. */
export type OnWait = 'ask' | 'deny';

/** Reviewer edits of the tool input: the decision's fields other than question answers. */
function editedInput(record: HandupRequest, toolInput: Record<string, unknown>): Record<string, unknown> | undefined {
  const { answers: _answers, ...edits } = record.decision?.fields ?? {};
  // updatedInput replaces the whole input, so unchanged fields go along.
  return Object.keys(edits).length ? { ...toolInput, ...edits } : undefined;
}

const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * A reviewer's edit of the tool input (the decision's `fields`) may change the values Claude Code
 * sent, each keeping its JSON type, and add nothing: the tool would refuse anything else, or run
 * something no preview showed.
 */
function checkDecision(record: HandupRequest, context: ClaudeCodeContext): void {
  if (record.decision?.outcome !== 'approve') return;
  const { answers: _answers, ...edits } = record.decision.fields ?? {};
  for (const [key, value] of Object.entries(edits)) {
    if (!Object.hasOwn(context.toolInput, key)) {
      throw new AppError('invalid_decision', `fields.${key}: the tool input has no "${key}" (an edit may change its values, not add to them)`);
    }
    const want = jsonType(context.toolInput[key]);
    if (jsonType(value) !== want)
      throw new AppError('invalid_decision', `fields.${key}: must stay ${want === 'array' || want === 'object' ? 'an' : 'a'} ${want}, as the tool sent it`);
  }
}

type Verdict = { allow: true; reason: string; updatedInput?: Record<string, unknown> } | { allow: false; reason: string } | null;

/** The verdict a record stands for (null: still pending). Expired and cancelled requests never allow. */
function verdict(record: HandupRequest, toolInput: Record<string, unknown>): Verdict {
  const d = record.decision;
  const who = d?.decided_by ?? 'countersign';
  const feedback = d?.feedback?.trim() ? d.feedback : null;
  switch (record.status) {
    case 'pending':
      return null;
    case 'approved': {
      const updatedInput = editedInput(record, toolInput);
      return { allow: true, reason: `Approved by ${who} in countersign${feedback ? `: ${feedback}` : ''}`, ...(updatedInput ? { updatedInput } : {}) };
    }
    case 'denied':
      return { allow: false, reason: feedback ?? `Denied by ${who}` };
    case 'expired':
      return { allow: false, reason: `No decision in countersign before request ${record.id} expired` };
    case 'cancelled':
      return { allow: false, reason: `Request ${record.id} was cancelled in countersign` };
    default:
      return { allow: false, reason: `Request ${record.id} ended ${record.status} in countersign` };
  }
}

/**
 * The hook output for `event` given the record as it stands (docs/formats/claude-code.md, "The answer"). A pending record
 * answers `ask` (Claude Code prompts locally) or, with `onWait: 'deny'`, a deny; for
 * PermissionRequest a pending `ask` is `{}`, which leaves Claude Code's own dialog in place.
 */
export function hookOutput(record: HandupRequest, event: AskingEvent, toolInput: Record<string, unknown>, onWait: OnWait = 'ask'): Record<string, unknown> {
  const v = verdict(record, toolInput);
  if (event === 'PermissionRequest') {
    if (v === null && onWait === 'ask') return {};
    const decision =
      v === null
        ? { behavior: 'deny', message: `No decision in countersign yet on request ${record.id}` }
        : v.allow
          ? { behavior: 'allow', ...(v.updatedInput ? { updatedInput: v.updatedInput } : {}) }
          : { behavior: 'deny', message: v.reason };
    return { hookSpecificOutput: { hookEventName: event, decision } };
  }
  if (v === null) {
    const reason =
      onWait === 'ask'
        ? `No decision in countersign yet on request ${record.id}; it stays open there`
        : `No decision in countersign in time on request ${record.id}`;
    return { hookSpecificOutput: { hookEventName: event, permissionDecision: onWait, permissionDecisionReason: reason } };
  }
  return {
    hookSpecificOutput: {
      hookEventName: event,
      permissionDecision: v.allow ? 'allow' : 'deny',
      permissionDecisionReason: v.reason,
      ...(v.allow && v.updatedInput ? { updatedInput: v.updatedInput } : {}),
    },
  };
}

function renderReply(record: HandupRequest, context: ClaudeCodeContext): unknown {
  return hookOutput(record, context.event, context.toolInput);
}

// ---- Follow-ups ----

/**
 * Hooks that tell a request no longer waits for a decision here. Each ends it `cancelled`, never
 * approved or denied: the agent itself sends them, and an agent must never settle its own request.
 * What happened goes to the audit row.
 */
function followUp(frame: ClaudeCodeHook): FollowUp {
  const event = frame.hook_event_name;
  if (event === 'SessionEnd') {
    const reason = str(frame.reason);
    return {
      kind: 'resolve-session',
      session: frame.session_id,
      status: 'cancelled',
      feedback: `the Claude Code session ended${reason ? ` (${reason})` : ''}`,
    };
  }
  if (!TOOL_FOLLOW_UPS.has(event)) return { kind: 'ignored', reason: `hook event "${event}" changes no request` };
  const f = frame as ToolHook;
  const feedback =
    event === 'PostToolUse'
      ? 'the tool call went ahead without a decision here (allowed in Claude Code itself)'
      : event === 'PermissionDenied'
        ? `Claude Code denied the tool call itself${str(frame.reason) ? `: ${str(frame.reason)}` : ''}`
        : frame.is_interrupt === true
          ? 'the tool call was interrupted in Claude Code'
          : 'the tool call went ahead without a decision here and failed';
  const key = nativeKey(f);
  const hash = inputKey(f);
  // A request made by a PermissionRequest hook (no tool_use_id) has the input hash as its key.
  const fallback = f.tool_use_id !== undefined ? { fallbackKeys: [hash] } : {};
  // The call is over, so the hash no longer stands for it: a later call with the same input in
  // the session repeats the hash, and must be asked anew rather than get this one's decision.
  return { kind: 'resolve', nativeKey: key, ...fallback, releaseKeys: [hash], status: 'cancelled', feedback };
}

export const claudeCodeAdapter = {
  format: FORMAT,
  frameSchema: ClaudeCodeHookSchema,
  followUpSchema: ClaudeCodeHookSchema,
  normalize,
  renderReply,
  followUp,
  checkDecision,
  // PermissionRequest after PreToolUse (both hooked) asks about the same tool call: its tool input must match, not the event.
  replayContext: (context: ClaudeCodeContext) => context.toolInput,
} satisfies WireAdapter<ClaudeCodeHook, ClaudeCodeContext, ClaudeCodeHook>;

import { QUESTION_OPTIONS } from '../requests/request-draft.js';
import { MAX_TITLE_BYTES, type Decision, type Option } from '../requests/request-schema.js';

/**
 * Helpers used by more than one wire adapter. Several adapters import these: add new exports,
 * never change the behaviour of existing ones.
 */

const TITLE_MAX_CHARS = 160;

/**
 * `text`, trimmed, when it reads as a request title: one non-empty line short enough for an
 * inbox row and within handup's title limit. Otherwise undefined, so the caller falls back to a
 * title of its own and keeps the text in the summary rather than truncating it.
 */
export function asTitle(text: string | null | undefined): string | undefined {
  const t = text?.trim();
  if (!t || /[\r\n]/.test(t) || t.length > TITLE_MAX_CHARS || Buffer.byteLength(t, 'utf8') > MAX_TITLE_BYTES) return undefined;
  return t;
}

// Agents name their own tools; these are the usual names of shell and file-editing tools.
const COMMAND_TOOLS = new Set(['bash', 'shell', 'sh', 'exec', 'run_command', 'terminal']);
const EDIT_TOOLS = new Set(['write', 'edit', 'multi_edit', 'apply_patch', 'write_file', 'edit_file']);

/** The handup kind of an approval to run `toolName`: a shell tool is a command, a file tool an edit. */
export function toolKind(toolName: string): 'command' | 'edit' | 'custom' {
  const name = toolName.toLowerCase();
  return COMMAND_TOOLS.has(name) ? 'command' : EDIT_TOOLS.has(name) ? 'edit' : 'custom';
}

/**
 * A question's answer as the one string protocols that answer by text take: the picked labels,
 * then the typed text, joined by ", " (empty when nothing was given).
 */
export function answerText(decision: Pick<Decision, 'fields'>, questionId: string): string {
  const answer = decision.fields?.answers?.[questionId];
  const parts = [...(answer?.selected ?? [])];
  if (answer?.text?.trim()) parts.push(answer.text);
  return parts.join(', ');
}

/**
 * The options of a question request, handup's own: Submit (approve), with the frame's label for
 * it when it has one, and Decline (deny). Fresh objects, so a caller may add to the list.
 */
export function submitOptions(submitLabel?: string | null): Option[] {
  const label = submitLabel?.trim();
  return QUESTION_OPTIONS.map((o) => (o.id === 'submit' && label ? { ...o, label } : { ...o }));
}

/**
 * handup answers with labels, so they must be unique within a question; protocols that answer
 * with option ids only need unique ids. A repeated label gets its option id appended.
 */
export function distinctLabels(options: ReadonlyArray<{ id: string; label: string }>): string[] {
  const counts = new Map<string, number>();
  for (const o of options) counts.set(o.label, (counts.get(o.label) ?? 0) + 1);
  return options.map((o) => ((counts.get(o.label) ?? 0) > 1 ? `${o.label} (${o.id})` : o.label));
}

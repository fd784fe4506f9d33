import { QUESTION_OPTIONS } from '../requests/request-draft.js';
import { MAX_LABEL, MAX_TITLE_BYTES, SAFE_ID, type Decision, type Option } from '../requests/request-schema.js';

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

/** "<agent> wants to run <tool>", shorter where the names are too long for a title (they stay in `source.agent` and `tool`). */
export function toolTitle(agent: string, tool: string): string {
  return asTitle(`${agent} wants to run ${tool}`) ?? asTitle(`Run ${tool}`) ?? 'Approve a tool call';
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
  const repeated = (o: { label: string }) => (counts.get(o.label) ?? 0) > 1;
  // A label made here may be one the frame already has ("X (y)" beside two "X"): numbered on until free.
  const taken = new Set(options.filter((o) => !repeated(o)).map((o) => o.label));
  return options.map((o) => {
    if (!repeated(o)) return o.label;
    let label = withSuffix(o.label, ` (${o.id})`);
    for (let n = 2; taken.has(label); n++) label = withSuffix(o.label, ` (${o.id}) ${n}`);
    taken.add(label);
    return label;
  });
}

/** `label` + `suffix` within MAX_LABEL (UTF-16 units, as the schema counts), the label cut short with "…" where it must be, never inside a character. */
function withSuffix(label: string, suffix: string): string {
  if (label.length + suffix.length <= MAX_LABEL) return label + suffix;
  let cut = '';
  for (const ch of label) {
    if (cut.length + ch.length + 1 + suffix.length > MAX_LABEL) break;
    cut += ch;
  }
  return `${cut}…${suffix}`;
}

/**
 * One part of a native key (`paperclip:{runId}:{requestId}`): a `:` inside an id is written
 * `%3A` (and `%` itself `%25`), so two requests whose ids split differently never share a key
 * (`run:x` + `y` against `run` + `x:y`). Ids without either read as they are.
 */
export function keyPart(id: string): string {
  return id.replace(/%/g, '%25').replace(/:/g, '%3A');
}

/** Record id → the native id it stands for, holding only the ids that differ. */
export type IdMap = Readonly<Record<string, string>>;

/**
 * What a native context keeps of the ids `safeIds` gave the record; absent (or a map absent)
 * means every record id is the native id itself, as for records made before ids were mapped.
 */
export interface NativeIds {
  questions?: IdMap;
  options?: IdMap;
}

/**
 * Record ids for a frame's question or option ids. Native protocols allow any text as an id, but
 * a record's ids end up in URLs, element ids, selectors and terminal output, so they are held to
 * SAFE_ID (and a question may not be `__proto__`). An id that passes stays exactly as it is; any
 * other gets `q1`, `q2`, … (`o1`, … for options), skipping the frame's own ids, the same one each
 * time it repeats. `map` leads back to the native ids and is undefined when none was replaced.
 */
export function safeIds(native: readonly string[], of: 'question' | 'option'): { ids: string[]; map: IdMap | undefined } {
  const passes = (id: string) => SAFE_ID.test(id) && !(of === 'question' && id === '__proto__');
  const taken = new Set(native.filter(passes));
  const given = new Map<string, string>();
  let n = 0;
  const ids = native.map((id) => {
    if (passes(id)) return id;
    let safe = given.get(id);
    if (safe === undefined) {
      do safe = `${of[0]}${++n}`;
      while (taken.has(safe));
      given.set(id, safe);
    }
    return safe;
  });
  return { ids, map: given.size > 0 ? Object.fromEntries([...given].map(([nativeId, safe]) => [safe, nativeId])) : undefined };
}

/** The native id a record id stands for (itself when the map has none). */
export function nativeIdOf(map: IdMap | undefined, id: string): string {
  return map !== undefined && Object.hasOwn(map, id) ? map[id]! : id;
}

/** The record id that stands for a native id (itself when the map has none). */
export function recordIdOf(map: IdMap | undefined, nativeId: string): string {
  for (const [id, native] of Object.entries(map ?? {})) if (native === nativeId) return id;
  return nativeId;
}

/** `{nativeIds}` for a native context, or nothing when no id was replaced (the context then stays as it always was). */
export function withNativeIds(ids: NativeIds): { nativeIds?: NativeIds } {
  const kept: NativeIds = {};
  if (ids.questions) kept.questions = ids.questions;
  if (ids.options) kept.options = ids.options;
  return kept.questions || kept.options ? { nativeIds: kept } : {};
}

/** An object keyed by native ids, which may be `__proto__`: each becomes an own key, as JSON will send it. */
export function byNativeId<V>(entries: Iterable<readonly [string, V]>): Record<string, V> {
  return Object.fromEntries(entries) as Record<string, V>;
}

import { structuredPatch } from 'diff';

/** One replacement in a file: the text that was there and the text that replaces it. */
export interface Replacement {
  oldText: string;
  newText: string;
}

/**
 * A unified diff of replacements in one file, built from the replaced snippets alone (the file
 * itself is not read, so hunk line numbers count from the start of each snippet). One `---`/`+++`
 * header, then the hunks of every replacement in order.
 */
export function unifiedDiff(path: string, replacements: readonly Replacement[], context = 3): string {
  // Relative paths get git's a/ and b/ prefixes; an absolute path is shown as it is.
  const absolute = /^([\\/]|[a-zA-Z]:[\\/])/.test(path);
  const lines = absolute ? [`--- ${path}`, `+++ ${path}`] : [`--- a/${path}`, `+++ b/${path}`];
  // One budget of lines for all the replacements of a call (a MultiEdit carries many).
  let budget = MAX_DIFF_LINES;
  for (const { oldText, newText } of replacements) {
    // Snippets rarely end in a newline; without one, every hunk would carry "\ No newline" markers.
    const [before, after] = [withNewline(oldText), withNewline(newText)];
    const size = lineCount(before) + lineCount(after);
    const patch = size <= budget ? structuredPatch(path, path, before, after, undefined, undefined, { context, maxEditLength: MAX_EDIT_LENGTH }) : undefined;
    budget -= Math.min(size, budget);
    if (!patch) {
      lines.push(...replacedWhole(before, after));
      continue;
    }
    for (const h of patch.hunks) {
      lines.push(`@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@`, ...h.lines);
    }
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Past these, a replacement is shown as every old line removed and every new one added: a line
 * diff costs time with the product of its lengths and edits, on the event loop, and an agent
 * sets both (an Edit of 10,000 changed lines took seconds). The lines are counted over all the
 * replacements of a call, so a MultiEdit of many large edits costs no more than one. Both limits are counts, not
 * timers, so the same frame always shows the same diff, and a replay its own content hash.
 */
const MAX_DIFF_LINES = 5000;
const MAX_EDIT_LENGTH = 1000;

const lineCount = (s: string) => (s === '' ? 0 : s.split('\n').length - 1);

/** One hunk replacing all of `before` with all of `after` (both end in a newline, or are empty). */
function replacedWhole(before: string, after: string): string[] {
  const [removed, added] = [before, after].map((s) => (s === '' ? [] : s.slice(0, -1).split('\n')));
  const at = (n: number) => (n === 0 ? '0,0' : range(1, n));
  return [`@@ -${at(removed!.length)} +${at(added!.length)} @@`, ...removed!.map((l) => `-${l}`), ...added!.map((l) => `+${l}`)];
}

const withNewline = (s: string) => (s === '' || s.endsWith('\n') ? s : `${s}\n`);
const range = (start: number, count: number) => (count === 1 ? `${start}` : `${start},${count}`);

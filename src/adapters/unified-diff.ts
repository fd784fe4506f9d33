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
  for (const { oldText, newText } of replacements) {
    // Snippets rarely end in a newline; without one, every hunk would carry "\ No newline" markers.
    const patch = structuredPatch(path, path, withNewline(oldText), withNewline(newText), undefined, undefined, { context });
    for (const h of patch.hunks) {
      lines.push(`@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@`, ...h.lines);
    }
  }
  return `${lines.join('\n')}\n`;
}

const withNewline = (s: string) => (s === '' || s.endsWith('\n') ? s : `${s}\n`);
const range = (start: number, count: number) => (count === 1 ? `${start}` : `${start},${count}`);

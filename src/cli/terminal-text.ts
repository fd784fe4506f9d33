import { HIDDEN_CHARACTERS, inEmojiTagSequence } from '../lib/visible-text.js';

/**
 * The one place that decides what the CLI may send to a terminal. Almost everything the CLI
 * prints comes from agents (titles, previews, option and question ids, source fields, error
 * messages that echo them), so nothing may reach the terminal that it would act on instead of
 * showing: C0 and C1 controls (ESC starts CSI cursor moves, screen clears and OSC 52 clipboard
 * writes; U+009B is a one-byte CSI, U+009D a one-byte OSC), DEL, and the bidi and invisible
 * format characters that reorder or hide text (U+202A–U+202E, U+2066–U+2069, U+200E/F, U+061C,
 * and the invisible ones src/lib/visible-text.ts lists), plus the Unicode line and paragraph separators. Each becomes a visible U+FFFD.
 */
// What a page hides (src/lib/visible-text.ts), and the layout characters a terminal acts on too:
// tab, line feed, carriage return, the line and paragraph separators.
const UNSAFE = new RegExp(`[\\t\\n\\r\\u2028\\u2029]|${HIDDEN_CHARACTERS.source}`, 'gu');

const SHOWN_AS = '\uFFFD';

/**
 * One agent-supplied value, made safe to print. Single-line fields (the default) show a line
 * break or tab as a space, so a title cannot fake a second line of output; `multiline` keeps
 * newlines and tabs for summaries, previews and feedback.
 */
export function clean(text: string, { multiline = false } = {}): string {
  const t = multiline ? text.replace(/\r\n/g, '\n') : text;
  return t.replace(UNSAFE, (c, i: number, all: string) => {
    if (multiline && (c === '\n' || c === '\t')) return c;
    if (inEmojiTagSequence(all, i)) return c;
    return c === '\n' || c === '\r' || c === '\t' ? ' ' : SHOWN_AS;
  });
}

/**
 * The last guard on every write of human output: whatever a renderer forgot to `clean` still
 * cannot act on the terminal. Newlines and tabs are layout and stay.
 */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c, i: number, all: string) => (c === '\n' || c === '\t' || inEmojiTagSequence(all, i) ? c : SHOWN_AS));
}

/**
 * `--json` output. JSON.stringify escapes C0 controls but writes DEL, C1 controls and the bidi
 * characters raw, which a terminal would act on; they are escaped as `\uXXXX` too, so the
 * output is the same JSON value and safe to print. (Outside strings JSON text is plain ASCII,
 * so only string contents are touched.)
 */
export function jsonText(value: unknown): string {
  // Each UTF-16 unit escaped: a character beyond the BMP (a tag) is two, the JSON value unchanged.
  const escaped = (c: string) => Array.from({ length: c.length }, (_, k) => `\\u${c.charCodeAt(k).toString(16).padStart(4, '0')}`).join('');
  return JSON.stringify(value, null, 2).replace(UNSAFE, (c) => (c === '\n' ? c : escaped(c)));
}

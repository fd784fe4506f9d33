/**
 * Helpers used by more than one wire adapter. Several adapters import these: add new exports,
 * never change the behaviour of existing ones.
 */

const TITLE_MAX_CHARS = 160;
/** handup's own limit for `title`. */
const TITLE_MAX_BYTES = 512;

/**
 * `text`, trimmed, when it reads as a request title: one non-empty line short enough for an
 * inbox row and within handup's title limit. Otherwise undefined, so the caller falls back to a
 * title of its own and keeps the text in the summary rather than truncating it.
 */
export function asTitle(text: string | null | undefined): string | undefined {
  const t = text?.trim();
  if (!t || /[\r\n]/.test(t) || t.length > TITLE_MAX_CHARS || Buffer.byteLength(t, 'utf8') > TITLE_MAX_BYTES) return undefined;
  return t;
}

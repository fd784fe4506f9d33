/**
 * `text` in at most `max` UTF-16 units, ended with "…" when cut, and never cut between the two
 * halves of a character outside the Basic Multilingual Plane (an emoji): a lone half is not text,
 * and JSON carries it as an escape receivers refuse.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

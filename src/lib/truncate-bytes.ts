/** `text` cut to at most `max` UTF-8 bytes at a character boundary, marked with "…" when cut. */
export function truncateBytes(text: string, max: number): string {
  if (Buffer.byteLength(text, 'utf8') <= max) return text;
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > max - 3) break;
    out += ch;
    bytes += n;
  }
  return `${out}…`;
}

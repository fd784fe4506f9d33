/**
 * Characters that make text read differently from what it is, shown as U+FFFD wherever a person
 * reads agent text (the inbox's copy is public/js/visible-text.js; a test holds the two equal):
 * C0 and C1 controls but tab and line breaks, bidi embeddings, overrides and isolates, directional
 * marks, and the invisible ones an agent could hide in a word ("Deny" + U+200B is not "Deny"):
 * soft hyphen, zero-width space, word joiner and the other invisible operators, the BOM, Hangul
 * fillers, the combining grapheme joiner, interlinear annotations, shorthand format controls,
 * musical format controls, and tags outside an emoji tag sequence (a subdivision flag). Zero-width
 * joiners and variation selectors stay: emoji and several scripts need them.
 */
export const HIDDEN_CHARACTERS =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0000}-\u{e007f}]/gu;

/** `text` with each hidden character shown as U+FFFD: `invoice\u202Efdp.exe` reads `invoice�fdp.exe`. */
export function visibleText(text: string): string {
  return text.replace(HIDDEN_CHARACTERS, (c, i: number, all: string) => (inEmojiTagSequence(all, i) ? c : '\uFFFD'));
}

/**
 * Whether the character at `i` is a tag inside an emoji tag sequence (a subdivision flag such as
 * Scotland's: U+1F3F4, tag letters, U+E007F), where tags are part of the emoji, not hidden text.
 */
export function inEmojiTagSequence(text: string, i: number): boolean {
  let j = i;
  while (j >= 2) {
    const cp = text.codePointAt(j - 2)!;
    if (cp < 0xe0020 || cp > 0xe007f) break;
    j -= 2;
  }
  return j >= 2 && text.codePointAt(j - 2) === 0x1f3f4;
}

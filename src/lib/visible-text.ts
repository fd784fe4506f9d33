/**
 * Characters that make text read differently from what it is, shown as U+FFFD wherever a person
 * reads agent text (the inbox's copy is public/js/visible-text.js; a test holds the two equal):
 * C0 and C1 controls but tab and line breaks, bidi embeddings, overrides and isolates, directional
 * marks, and the invisible ones an agent could hide in a word ("Deny" + U+200B is not "Deny"):
 * soft hyphen, zero-width space, word joiner and the other invisible operators, the BOM, tags.
 * Zero-width joiners and variation selectors stay: emoji and several scripts need them.
 */
export const HIDDEN_CHARACTERS =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\u{e0000}-\u{e007f}]/gu;

/** `text` with each hidden character shown as U+FFFD: `invoice\u202Efdp.exe` reads `invoice�fdp.exe`. */
export function visibleText(text: string): string {
  return text.replace(HIDDEN_CHARACTERS, '\uFFFD');
}

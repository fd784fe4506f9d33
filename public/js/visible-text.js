/**
 * Characters that make text read differently from what it is: bidi embeddings, overrides and
 * isolates (U+202A–U+202E, U+2066–U+2069), directional marks (U+200E, U+200F, U+061C), C0/C1
 * control characters, and invisible ones an agent could hide in a word (soft hyphen, zero-width
 * space, word joiner and the invisible operators, the BOM, Hangul fillers and the other
 * invisible format controls, tags outside a subdivision flag): "Deny" + U+200B reads "Deny�".
 * Agents choose every string this page shows, so each of these is shown as U+FFFD, the notation
 * the CLI uses: `invoice\u202Efdp.exe` reads `invoice�fdp.exe`, never `invoiceexe.pdf`. Tabs and
 * line breaks stay, and so do zero-width joiners and variation selectors (emoji need them). Form
 * values sent back to the daemon (an answer that is an option's label) are never rewritten, only
 * what is displayed. The daemon's copy, for the pages it renders itself: src/lib/visible-text.ts.
 */

const HIDDEN =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0000}-\u{e007f}]/gu;
const REPLACEMENT = '\uFFFD';

export function visible(text) {
  return String(text).replace(HIDDEN, (c, i, all) => (inEmojiTagSequence(all, i) ? c : REPLACEMENT));
}

/** Whether the character at `i` is a tag inside an emoji tag sequence (a subdivision flag), where it is part of the emoji. */
function inEmojiTagSequence(text, i) {
  let j = i;
  while (j >= 2) {
    const cp = text.codePointAt(j - 2);
    if (cp < 0xe0020 || cp > 0xe007f) break;
    j -= 2;
  }
  return j >= 2 && text.codePointAt(j - 2) === 0x1f3f4;
}

/** Whether code point `cp` is one of the characters `visible` replaces. */
function hidden(cp) {
  return cp <= 0x10ffff && String.fromCodePoint(cp).replace(HIDDEN, '') === '';
}

/**
 * The same for an HTML document shown in the sandboxed preview, whose DOM this page cannot
 * reach: the characters themselves, and character references to them (`&#x202E;`, `&#8238;`,
 * `&rlm;`, `&lrm;`). Numeric references to 0x80–0x9F are left alone: HTML reads them as
 * Windows-1252 printable characters (`&#x80;` is €), not as C1 controls.
 */
export function visibleHtml(html) {
  return (
    visible(html)
      // As many digits as the HTML parser reads (leading zeros included).
      .replace(/&#(?:[xX]([0-9a-fA-F]+)|([0-9]+));?/g, (ref, hex, dec) => {
        const cp = hex !== undefined ? parseInt(hex, 16) : Number(dec);
        return cp >= 0x80 && cp <= 0x9f ? ref : hidden(cp) ? '&#xFFFD;' : ref;
      })
      .replace(/&(?:lrm|rlm);/g, '&#xFFFD;')
  );
}

import { describe, expect, it } from 'vitest';
// The page's own modules: plain ES modules with no DOM, so they run here as they do in the browser.
import { rasterType } from '../../public/js/raster-type.js';
import { visible, visibleHtml } from '../../public/js/visible-text.js';
import { clean } from '../../src/cli/render.js';
import { visibleText } from '../../src/lib/visible-text.js';

const BIDI = ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069'];
const MARKS = ['\u200E', '\u200F', '\u061C'];
// Invisible characters an agent could hide in a word ("Deny" + U+200B).
const INVISIBLE = [
  ...['\u00AD', '\u034F', '\u115F', '\u1160', '\u17B4', '\u17B5', '\u180E', '\u200B', '\u2060', '\u2061', '\u2064', '\u206A', '\u206F', '\u3164'],
  ...['\uFEFF', '\uFFA0', '\uFFF9', '\uFFFB', '\u{1BCA0}', '\u{1BCA3}', '\u{1D173}', '\u{1D17A}', '\u{E0001}', '\u{E0041}', '\u{E007F}'],
];
const SCOTLAND = '\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}';
const CONTROLS = [...Array(32).keys(), 0x7f, ...Array.from({ length: 32 }, (_, i) => 0x80 + i)]
  .filter((cp) => ![0x09, 0x0a, 0x0d].includes(cp))
  .map((cp) => String.fromCodePoint(cp));
const hex = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

describe('the page shows bidi, invisible and control characters (public/js/visible-text.js)', () => {
  it.each([...BIDI, ...MARKS, ...INVISIBLE, ...CONTROLS].map((c) => [hex(c), c]))('%s becomes U+FFFD', (_name, c) => {
    expect(visible(`a${c}b`)).toBe('a\uFFFDb');
  });

  it("uses the CLI's notation for every character both handle", () => {
    for (const c of [...BIDI, ...INVISIBLE, ...CONTROLS]) expect(visible(c), hex(c)).toBe(clean(c, { multiline: true }));
  });

  it('shows exactly the characters the pages the daemon renders itself show (src/lib/visible-text.ts)', () => {
    const differ: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      if (visible(c) !== visibleText(c)) differ.push(hex(c));
    }
    expect(differ).toEqual([]);
  });

  it('keeps tabs, line breaks, ordinary text, right-to-left script and emoji sequences', () => {
    for (const text of ['a\tb\nc\r\nd', 'invoice.pdf', 'שלום עולם', 'مرحبا', '👩‍💻 ok', '❤\uFE0F', 'می\u200Cخواهم', '']) expect(visible(text)).toBe(text);
    expect(visible('invoice\u202Efdp.exe')).toBe('invoice\uFFFDfdp.exe');
    // Tags are part of a subdivision flag, and hidden anywhere else.
    for (const show of [visible, visibleText, (t: string) => clean(t, { multiline: true })]) {
      expect(show(`${SCOTLAND} ok`)).toBe(`${SCOTLAND} ok`);
      expect(show('Deny\u{E0041}\u{E007F}')).toBe('Deny\uFFFD\uFFFD');
    }
  });

  it('in HTML, also rewrites character references to them, and only those', () => {
    expect(visibleHtml('<p>a\u202Eb</p>')).toBe('<p>a\uFFFDb</p>');
    for (const ref of [
      '&#x202E;',
      '&#X202e;',
      '&#8238;',
      '&#x0000202E;',
      '&#x00000000000000202e;',
      '&#0000000000008238;',
      '&#x202E',
      '&#8207;',
      '&#x61C;',
      '&#x2066;',
      '&#1;',
      '&rlm;',
      '&lrm;',
    ]) {
      expect(visibleHtml(`a${ref} b`), ref).toBe('a&#xFFFD; b');
    }
    // Not references to hidden characters: tab and newline, Windows-1252 for 0x80-0x9F, escaped text, ordinary ones.
    for (const html of ['&#9;&#10;&#13;', '&#x80;&#150;', '&amp;#x202E;', '&#x41;&#169;&amp;&lt;', '&RLM;', '&#x110000;', '&#99999999999;']) {
      expect(visibleHtml(html), html).toBe(html);
    }
  });
});

describe('which bytes the page draws as an image (public/js/raster-type.js)', () => {
  const bytes = (...parts: Array<string | number[]>) => new Uint8Array(parts.flatMap((p) => (typeof p === 'string' ? [...Buffer.from(p, 'latin1')] : p)));

  it('PNG, JPEG, GIF, WebP and AVIF by their signatures', () => {
    expect(rasterType(bytes([0x89], 'PNG\r\n\x1a\n', [0, 0, 0, 13]))).toBe('image/png');
    expect(rasterType(bytes([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(rasterType(bytes('GIF89a', [1, 0]))).toBe('image/gif');
    expect(rasterType(bytes('GIF87a'))).toBe('image/gif');
    expect(rasterType(bytes('RIFF', [0x24, 0, 0, 0], 'WEBPVP8 '))).toBe('image/webp');
    expect(rasterType(bytes([0, 0, 0, 0x1c], 'ftypavif'))).toBe('image/avif');
    expect(rasterType(bytes([0, 0, 0, 0x1c], 'ftypavis'))).toBe('image/avif');
  });

  it('nothing else, whatever it claims to be: SVG, HTML, XML, PDF, other RIFF or ISO files, truncated signatures, nothing', () => {
    for (const b of [
      bytes('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
      bytes('<?xml version="1.0"?><svg/>'),
      bytes('<!doctype html><script>alert(1)</script>'),
      bytes('%PDF-1.7'),
      bytes('RIFF', [0, 0, 0, 0], 'WAVEfmt '),
      bytes([0, 0, 0, 0x18], 'ftypmp42'),
      bytes([0x89], 'PNG'),
      bytes('GIF8'),
      bytes(),
    ])
      expect(rasterType(b), Buffer.from(b).toString('latin1')).toBeNull();
  });
});

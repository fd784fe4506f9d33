/**
 * Path globs of rule matchers (`cwd`, `repo`, `tool`): `*` matches within one `/`-separated
 * segment, `**` as a whole segment matches any number of segments (none included), and `\`
 * makes the next character literal. Everything else is literal, `?` and brackets included.
 * A glob matches the whole value.
 */

export class GlobError extends Error {
  override name = 'GlobError';
}

// The syntax characters (and `/`): the only ones a unicode-mode expression lets us escape.
const REGEX_SPECIAL = /[.*+?^${}()|[\]\\/]/g;
const escapeRegex = (s: string) => s.replace(REGEX_SPECIAL, '\\$&');

/** Compiles a glob to an anchored regular expression; throws GlobError on a malformed one. */
export function compileGlob(glob: string): RegExp {
  if (glob.length === 0) throw new GlobError('must not be empty');
  const segments = splitSegments(glob);
  let out = '';
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    const first = i === 0;
    const last = i === segments.length - 1;
    if (seg === '**') {
      // `**` alone: anything. Leading `**/`: any leading directories, none included.
      // Trailing `/**`: the directory itself or anything under it. Middle `/**/`: any depth.
      if (segments.length === 1) out += '.*';
      else if (first) out += '(?:.*/)?';
      else if (last) out = `${out.slice(0, -1)}(?:/.*)?`;
      else out += '(?:.*/)?';
      continue;
    }
    out += segmentRegex(seg);
    if (!last) out += '/';
  }
  return new RegExp(`^${out}$`, 'su');
}

/** Splits on `/` outside escapes, checking `**` stands alone in its segment. */
function splitSegments(glob: string): string[] {
  const segments: string[] = [];
  let current = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '\\') {
      if (i + 1 >= glob.length) throw new GlobError('ends with a lone "\\" (escape what?)');
      current += c + glob[++i]!;
    } else if (c === '/') {
      segments.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  segments.push(current);
  for (const seg of segments) {
    if (seg !== '**' && /(^|[^\\])\*\*/.test(seg)) {
      throw new GlobError(`"**" must be a whole path segment (as in "a/**/b"), not part of "${seg}"`);
    }
  }
  return segments;
}

function segmentRegex(seg: string): string {
  let out = '';
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!;
    if (c === '\\') out += escapeRegex(seg[++i]!);
    else if (c === '*') out += '[^/]*';
    else out += escapeRegex(c);
  }
  return out;
}

/** A glob that matches exactly `text`. */
export function escapeGlob(text: string): string {
  return text.replace(/[\\*]/g, '\\$&');
}

/** Escapes `text` for use inside a regular expression (matched literally). */
export function escapeRegExp(text: string): string {
  return text.replace(REGEX_SPECIAL, '\\$&');
}

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

/** A compiled glob: whether a whole value matches. */
export interface Glob {
  test(value: string): boolean;
}

/** One segment: literal chunks with a `*` between each two (a single chunk: no star). */
type Segment = string[];
/** The segments between two `**`, matched against as many consecutive path segments. */
type Piece = Segment[];

/**
 * Compiles a glob; throws GlobError on a malformed one. Matching never backtracks: the values
 * come from agents (a 4 KiB cwd, a 512-byte tool), and a regular expression for a glob with a
 * few `*` or `**` took seconds to minutes on a crafted one, holding the daemon. A segment is
 * matched chunk by chunk, leftmost first; the pieces between `**` likewise, segment-aligned.
 */
export function compileGlob(glob: string): Glob {
  if (glob.length === 0) throw new GlobError('must not be empty');
  const pieces: Piece[] = [[]];
  for (const seg of splitSegments(glob)) {
    if (seg === '**') pieces.push([]);
    else pieces[pieces.length - 1]!.push(...segmentChunks(seg));
  }
  return { test: (value) => matchPieces(pieces, value.split('/')) };
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

/**
 * The literal chunks of a segment, split at each unescaped `*`. An escaped `/` still matches
 * the value's `/`, which separates its segments, so it starts another segment.
 */
function segmentChunks(seg: string): Segment[] {
  const segments = [['']];
  let chunks = segments[0]!;
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!;
    if (c === '\\' && seg[i + 1] === '/') {
      i++;
      segments.push((chunks = ['']));
    } else if (c === '\\') chunks[chunks.length - 1] += seg[++i]!;
    else if (c === '*') chunks.push('');
    else chunks[chunks.length - 1] += c;
  }
  return segments;
}

function matchSegment(chunks: Segment, s: string): boolean {
  if (chunks.length === 1) return s === chunks[0];
  const first = chunks[0]!;
  const last = chunks[chunks.length - 1]!;
  if (s.length < first.length + last.length || !s.startsWith(first) || !s.endsWith(last)) return false;
  const end = s.length - last.length;
  let pos = first.length;
  for (let i = 1; i < chunks.length - 1; i++) {
    const at = s.indexOf(chunks[i]!, pos);
    if (at === -1 || at + chunks[i]!.length > end) return false;
    pos = at + chunks[i]!.length;
  }
  return true;
}

const pieceAt = (piece: Piece, segments: string[], at: number) => piece.every((chunks, j) => matchSegment(chunks, segments[at + j]!));

/** The first piece anchors the start, the last the end; the ones between go leftmost in between. */
function matchPieces(pieces: Piece[], segments: string[]): boolean {
  const first = pieces[0]!;
  if (pieces.length === 1) return segments.length === first.length && pieceAt(first, segments, 0);
  const last = pieces[pieces.length - 1]!;
  const end = segments.length - last.length;
  if (end < first.length || !pieceAt(first, segments, 0) || !pieceAt(last, segments, end)) return false;
  let pos = first.length;
  for (let p = 1; p < pieces.length - 1; p++) {
    const piece = pieces[p]!;
    let at = pos;
    while (at + piece.length <= end && !pieceAt(piece, segments, at)) at++;
    if (at + piece.length > end) return false;
    pos = at + piece.length;
  }
  return true;
}

/** A glob that matches exactly `text`. */
export function escapeGlob(text: string): string {
  return text.replace(/[\\*]/g, '\\$&');
}

/** Escapes `text` for use inside a regular expression (matched literally). */
export function escapeRegExp(text: string): string {
  return text.replace(REGEX_SPECIAL, '\\$&');
}

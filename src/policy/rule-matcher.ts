import { posix, win32 } from 'node:path';
import { compileGlob } from './glob.js';
import type { RequestFacts } from './request-facts.js';
import type { RuleMatch } from './rule-schema.js';

export type FactsTest = (facts: RequestFacts) => boolean;

type ExactKey = 'agent' | 'session' | 'integration' | 'format' | 'kind' | 'risk';
type GlobKey = 'tool' | 'cwd' | 'repo';

const EXACT: readonly ExactKey[] = ['agent', 'session', 'integration', 'format', 'kind', 'risk'];
const GLOBS: readonly GlobKey[] = ['tool', 'cwd', 'repo'];

/**
 * Compiles a rule's `match` once into one test: every key given must match, and a field the
 * request lacks never matches. Exact keys take a value or a list; `tool`, `cwd`, `repo` are
 * globs (one or a list); `command` and `title` are regular expressions searched anywhere in the text.
 * A request may show several commands: `command` matches when any of them does, or, with
 * `everyCommand` (rules that let a request through without a person), only when every one does.
 * The match must already be valid (RuleMatchSchema); a bad pattern throws here.
 */
export function compileMatch(match: RuleMatch, { everyCommand = false }: { everyCommand?: boolean } = {}): FactsTest {
  const tests: FactsTest[] = [];
  for (const key of EXACT) {
    const want = match[key];
    if (want === undefined) continue;
    if (typeof want === 'string') tests.push((f) => f[key] === want);
    else {
      const set = new Set<string>(want);
      tests.push((f) => f[key] !== null && set.has(f[key]!));
    }
  }
  for (const key of GLOBS) {
    const glob = match[key];
    if (glob === undefined) continue;
    const res = (typeof glob === 'string' ? [glob] : glob).map((g) => compileGlob(key === 'cwd' ? cwdGlob(g) : g));
    const read = key === 'cwd' ? (f: RequestFacts) => (f.cwd === null ? null : resolvedPath(f.cwd)) : (f: RequestFacts) => f[key];
    tests.push((f) => {
      const value = read(f);
      return value !== null && res.some((re) => re.test(value));
    });
  }
  if (match.command !== undefined) {
    const re = new RegExp(match.command, 'u');
    if (everyCommand) tests.push((f) => f.commands.length > 0 && f.commands.every((c) => re.test(c)));
    else tests.push((f) => f.commands.some((c) => re.test(c)));
  }
  if (match.title !== undefined) {
    const re = new RegExp(match.title, 'u');
    tests.push((f) => re.test(f.title));
  }
  if (tests.length === 1) return tests[0]!;
  return (f) => {
    for (const t of tests) if (!t(f)) return false;
    return true;
  };
}

/**
 * A `cwd` glob read as the directories it is matched against are (resolvedPath): repeated `/`
 * as one, no trailing `/` (`/srv/app/` is `/srv/app`). `\` is the glob's escape, left alone.
 */
function cwdGlob(glob: string): string {
  const collapsed = glob.replace(/\/{2,}/g, '/');
  return collapsed.length > 1 && collapsed.endsWith('/') && !collapsed.endsWith('\\/') ? collapsed.slice(0, -1) : collapsed;
}

/**
 * A directory as the operating system reads it: `.` and `..` segments resolved, repeated
 * separators and a trailing one dropped. `/srv/safe/../../etc` is `/etc`, never a directory
 * under `/srv/safe/**`, and `//etc/ssh` or `/etc/ssh/` is `/etc/ssh`, under `/etc/**`.
 */
function resolvedPath(path: string): string {
  if (!/(^|[/\\])\.\.?([/\\]|$)|[/\\]{2}|.[/\\]$/.test(path)) return path;
  // A Windows path (`C:\srv\x\..`, or `/` and `\` mixed) resolves as Windows resolves it.
  const resolved = path.includes('\\') ? win32.normalize(path) : posix.normalize(path);
  return resolved.length > 1 && /[/\\]$/.test(resolved) && !/^[A-Za-z]:[/\\]$/.test(resolved) ? resolved.slice(0, -1) : resolved;
}

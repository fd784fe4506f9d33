import picomatch from 'picomatch';
import { z } from 'zod';
import type { HandupRequest } from '../requests/request-schema.js';

/**
 * The request matchers of policy.md §1 (`match:`), used by hooks to pick the requests they
 * hear about. Every key given must match; a field the request lacks never matches.
 * - `agent`, `session`, `integration`, `format`, `kind`, `risk`: an exact string or a list;
 * - `tool`, `cwd`, `repo`: globs (`*` within a path segment, `**` across `/`), one or a list;
 * - `command`, `title`: a regular expression searched in the command preview or the title.
 */

const oneOrMany = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

const glob = oneOrMany.superRefine((v, ctx) => {
  for (const g of typeof v === 'string' ? [v] : v) {
    try {
      picomatch.makeRe(g, GLOB_OPTIONS);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `invalid glob "${g}": ${(err as Error).message}` });
    }
  }
});

const regex = z.string().min(1).superRefine((v, ctx) => {
  try {
    new RegExp(v);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `invalid regular expression: ${(err as Error).message}` });
  }
});

export const MatchSchema = z
  .strictObject({
    agent: oneOrMany.optional(),
    session: oneOrMany.optional(),
    integration: oneOrMany.optional(),
    format: oneOrMany.optional(),
    kind: oneOrMany.optional(),
    risk: oneOrMany.optional(),
    tool: glob.optional(),
    cwd: glob.optional(),
    repo: glob.optional(),
    command: regex.optional(),
    title: regex.optional(),
  })
  .refine((m) => Object.keys(m).length > 0, { message: 'must name at least one field' });

export type Match = z.infer<typeof MatchSchema>;

const GLOB_OPTIONS = { dot: true } as const;

/** What a matcher looks at: the record and the wire format it came in. */
export interface MatchTarget {
  record: HandupRequest;
  format: string;
}

export type RequestMatcher = (target: MatchTarget) => boolean;

/** The command preview as one string: the `shell` text, else `argv` joined by spaces, trimmed. */
export function commandText(record: HandupRequest): string | null {
  const command = record.previews.find((p) => p.type === 'command')?.command;
  if (!command) return null;
  const text = command.shell ?? (command.argv ? command.argv.join(' ') : null);
  return text === null ? null : text.trim();
}

function toolOf(record: HandupRequest): string | null {
  if (record.tool) return record.tool;
  const input = record.input as Record<string, unknown> | null;
  const t = input?.tool ?? input?.tool_name;
  return typeof t === 'string' ? t : null;
}

const list = (v: string | string[]) => (typeof v === 'string' ? [v] : v);

/** Compiles a validated `match:` into a predicate; no `match` matches everything. */
export function compileMatcher(match: Match | undefined): RequestMatcher {
  if (!match) return () => true;
  const checks: RequestMatcher[] = [];
  const exact = (value: string | string[] | undefined, read: (t: MatchTarget) => string | null | undefined) => {
    if (value === undefined) return;
    const allowed = new Set(list(value));
    checks.push((t) => {
      const v = read(t);
      return typeof v === 'string' && allowed.has(v);
    });
  };
  const globs = (value: string | string[] | undefined, read: (t: MatchTarget) => string | null | undefined) => {
    if (value === undefined) return;
    const test = picomatch(list(value), GLOB_OPTIONS);
    checks.push((t) => {
      const v = read(t);
      return typeof v === 'string' && test(v);
    });
  };
  const pattern = (value: string | undefined, read: (t: MatchTarget) => string | null | undefined) => {
    if (value === undefined) return;
    const re = new RegExp(value);
    checks.push((t) => {
      const v = read(t);
      return typeof v === 'string' && re.test(v);
    });
  };
  exact(match.agent, (t) => t.record.source.agent);
  exact(match.session, (t) => t.record.source.session);
  exact(match.integration, (t) => t.record.source.integration);
  exact(match.format, (t) => t.format);
  exact(match.kind, (t) => t.record.kind);
  exact(match.risk, (t) => t.record.risk);
  globs(match.tool, (t) => toolOf(t.record));
  globs(match.cwd, (t) => t.record.source.cwd);
  globs(match.repo, (t) => t.record.source.repo);
  pattern(match.command, (t) => commandText(t.record));
  pattern(match.title, (t) => t.record.title);
  return (t) => checks.every((check) => check(t));
}

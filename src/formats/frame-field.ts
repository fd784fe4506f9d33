import type { FieldIssue } from '../lib/errors.js';

/** Past this many values searched, a frame is not searched further (the error keeps the record's name). */
const MAX_VISITED = 10_000;

/**
 * Where in `frame` a string the adapter carried over unchanged came from: the shallowest path
 * holding exactly `value` (the first in key order among equals), or undefined.
 */
export function framePathOf(frame: unknown, value: string): PropertyKey[] | undefined {
  let level: Array<{ at: unknown; path: PropertyKey[] }> = [{ at: frame, path: [] }];
  let visited = 0;
  while (level.length > 0) {
    const next: typeof level = [];
    for (const { at, path } of level) {
      if (++visited > MAX_VISITED) return undefined;
      if (at === value) return path;
      if (Array.isArray(at)) at.forEach((item, i) => next.push({ at: item, path: [...path, i] }));
      else if (at !== null && typeof at === 'object') for (const [k, v] of Object.entries(at)) next.push({ at: v, path: [...path, k] });
    }
    level = next;
  }
  return undefined;
}

const valueAt = (root: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>((at, key) => (at !== null && typeof at === 'object' ? (at as Record<PropertyKey, unknown>)[key] : undefined), root);

/**
 * A frame that does not fit a handup Request is refused naming the frame's own field where the
 * value came over unchanged (`payload.request.details.toolName`, not `tool`): that is the field
 * the sender can see and shorten. Values the adapter made (a title, a dedupe key) keep the
 * record's name.
 */
export function issuesInFrame(issues: ReadonlyArray<FieldIssue>, request: unknown, frame: unknown): FieldIssue[] {
  return issues.map((issue) => {
    const value = valueAt(request, issue.path);
    const from = typeof value === 'string' && value !== '' ? framePathOf(frame, value) : undefined;
    if (!from || from.length === 0) return issue;
    const field = issue.path.map(String).join('.');
    return { ...issue, path: from, message: `${issue.message} (as the record's ${field})` };
  });
}

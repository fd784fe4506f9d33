import { formatIssuePath, type FieldIssue } from '../lib/errors.js';

/**
 * How many values of a frame the search looks at, at most, counted as they are queued: a frame
 * larger than that is not searched (the error keeps the record's names), so a refused frame
 * costs the daemon no more than a small one however it is built.
 */
const MAX_VALUES = 10_000;

/**
 * Where in `frame` each of `wanted` stands: its path when exactly one value of the frame is that
 * string, null when several are (which one the adapter read cannot be told), absent when none
 * is. One breadth-first pass for all of them; empty when the frame has more than MAX_VALUES values.
 */
export function framePaths(frame: unknown, wanted: ReadonlySet<string>): Map<string, PropertyKey[] | null> {
  // Each queued value with its parent's index and its key there: paths are built only for hits.
  const at: unknown[] = [frame];
  const parent: number[] = [-1];
  const key: PropertyKey[] = [''];
  const hits = new Map<string, number | null>();
  for (let i = 0; i < at.length; i++) {
    const value = at[i];
    if (typeof value === 'string') {
      if (wanted.has(value)) hits.set(value, hits.has(value) ? null : i);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    const push = (k: PropertyKey, v: unknown) => {
      at.push(v);
      parent.push(i);
      key.push(k);
    };
    if (Array.isArray(value)) {
      if (at.length + value.length > MAX_VALUES) return new Map();
      value.forEach((v, k) => push(k, v));
    } else {
      for (const k of Object.keys(value)) {
        if (at.length >= MAX_VALUES) return new Map();
        push(k, (value as Record<string, unknown>)[k]);
      }
    }
  }
  const pathOf = (i: number): PropertyKey[] => {
    const path: PropertyKey[] = [];
    for (let j = i; j > 0; j = parent[j]!) path.unshift(key[j]!);
    return path;
  };
  return new Map([...hits].map(([value, i]) => [value, i === null ? null : pathOf(i)]));
}

const valueAt = (root: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>((at, key) => (at !== null && typeof at === 'object' ? (at as Record<PropertyKey, unknown>)[key] : undefined), root);

/**
 * A frame that does not fit a handup Request is refused naming the frame's own field where the
 * value came over unchanged (`payload.request.details.toolName`, not `tool`): that is the field
 * the sender can see and shorten. Values the adapter made (a title, a dedupe key), and values
 * the frame holds in more than one place, keep the record's name.
 */
export function issuesInFrame(issues: ReadonlyArray<FieldIssue>, request: unknown, frame: unknown): FieldIssue[] {
  const values = issues.map((issue) => valueAt(request, issue.path));
  const wanted = new Set(values.filter((v): v is string => typeof v === 'string' && v !== ''));
  if (wanted.size === 0) return [...issues];
  const found = framePaths(frame, wanted);
  return issues.map((issue, n) => {
    const value = values[n];
    const from = typeof value === 'string' ? found.get(value) : undefined;
    if (!from || from.length === 0) return issue;
    return { ...issue, path: from, message: `${issue.message} (as the record's ${formatIssuePath(issue.path)})` };
  });
}

import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { AppError, formatIssuePath } from '../lib/errors.js';
import { routeOf } from './route-config.js';

/** serde_json's default recursion limit, so anything handup itself accepts is accepted here. */
export const MAX_JSON_DEPTH = 128;

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * What is wrong with a parsed JSON value that JSON.parse accepts but the rest of the daemon
 * cannot handle, or null: nesting deeper than `maxDepth` (recursive validation, serialisation
 * and RFC 8785 canonicalisation would overflow the stack), strings with lone surrogate
 * escapes such as "\ud800" (not Unicode; RFC 8785 refuses them), numbers beyond float64
 * such as 1e400 (parsed as Infinity, which RFC 8785 refuses and JSON.stringify turns into
 * null) and integers beyond 2^53 (rounded by the parse). Iterative, so the check itself cannot overflow. The message starts with the
 * offending field's path.
 */
export function jsonValueProblem(value: unknown, maxDepth = MAX_JSON_DEPTH, source?: string): string | null {
  let literals: Set<number> | undefined;
  // Each entry links to its parent instead of carrying its own path: the path is built only for
  // the message, so a well-formed body costs no allocation per value beyond the stack.
  const stack: Visit[] = [{ value, key: undefined, depth: 0, parent: null }];
  while (stack.length) {
    const visit = stack.pop()!;
    const v = visit.value;
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return `${formatIssuePath(pathOf(visit))}: must be valid Unicode (it contains a lone surrogate escape)`;
      continue;
    }
    // JSON.parse reads 1e400 as Infinity, which no JSON can carry back out (RFC 8785 refuses it).
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return `${formatIssuePath(pathOf(visit))}: the number is too large (out of the float64 range)`;
      // Past 2^53 JSON.parse rounds an integer (12345678901234567891 becomes …67000): the reviewer
      // would see, and the content hash cover, a number the agent never sent (I-JSON, RFC 7493
      // §2.2). Every float this large is integral too, so the text decides: only digits written
      // out (no fraction, no exponent) are an integer; 1.5e17 is a float, whose rounding is its own.
      // Without the text, from 1e21 up only an exponent could have written it.
      const size = Math.abs(v);
      if (size > Number.MAX_SAFE_INTEGER && Number.isInteger(v) && (source === undefined ? size < 1e21 : (literals ??= unsafeIntegerLiterals(source)).has(v))) {
        return `${formatIssuePath(pathOf(visit))}: the integer is too large to keep exactly (beyond ±(2^53 - 1)); send it as a string`;
      }
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (visit.depth >= maxDepth) return `${formatIssuePath(pathOf(visit).slice(0, 1))}: nested deeper than ${maxDepth} levels`;
    const depth = visit.depth + 1;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: i, depth, parent: visit });
    } else {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        const child = (v as Record<string, unknown>)[key];
        if (LONE_SURROGATE.test(key)) return `${formatIssuePath(pathOf(visit))}: a key must be valid Unicode (it contains a lone surrogate escape)`;
        // Prototype poisoning: code that copies such an object could change every object's prototype.
        if (key === '__proto__' || (key === 'constructor' && isObject(child) && Object.hasOwn(child, 'prototype'))) {
          return `${formatIssuePath([...pathOf(visit), key])}: the key "${key}" is not allowed`;
        }
        stack.push({ value: child, key, depth, parent: visit });
      }
    }
  }
  return null;
}

interface Visit {
  value: unknown;
  /** Where the value sits in its parent; undefined for the root. */
  key: PropertyKey | undefined;
  depth: number;
  parent: Visit | null;
}

function pathOf(visit: Visit): PropertyKey[] {
  const path: PropertyKey[] = [];
  for (let at: Visit | null = visit; at && at.key !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
}

function isObject(v: unknown): v is object {
  return typeof v === 'object' && v !== null;
}

export type ParsedJson = { ok: true; value: unknown } | { ok: false; syntax: boolean; message: string };

// A JSON string (skipped whole, so digits inside one are not numbers) or a number token.
const STRING_OR_NUMBER = /"(?:[^"\\]|\\.)*"|-?\d+(\.\d+)?([eE][+-]?\d+)?/g;

/** The values of the integers in valid JSON text written in digits alone beyond ±(2^53 - 1). Only read when a value is that large. */
function unsafeIntegerLiterals(text: string): Set<number> {
  const out = new Set<number>();
  for (const m of text.matchAll(STRING_OR_NUMBER)) {
    if (m[0].startsWith('"') || m[1] !== undefined || m[2] !== undefined) continue;
    const n = Number(m[0]);
    if (!Number.isSafeInteger(n)) out.add(n);
  }
  return out;
}

/**
 * The one JSON parser for everything a client sends, HTTP bodies and bridge WebSocket frames
 * alike: JSON.parse, then `jsonValueProblem` (depth, Unicode, finite numbers, `__proto__` and
 * `constructor.prototype` keys). `syntax` tells text that is not JSON at all from JSON the
 * daemon refuses; `message` then names the field.
 */
export function parseJson(text: string): ParsedJson {
  let value: unknown;
  try {
    // A UTF-8 byte order mark is not JSON, but some clients send one.
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    return { ok: false, syntax: true, message: 'the body is not valid JSON' };
  }
  const problem = jsonValueProblem(value, MAX_JSON_DEPTH, text);
  return problem ? { ok: false, syntax: false, message: problem } : { ok: true, value };
}

/**
 * Replaces the default JSON body parser with `parseJson`, so every JSON route (handup and
 * native formats alike) refuses such bodies with a 400, in the route's validation code, before
 * any route code sees them.
 */
export function registerJsonBodyParser(app: FastifyInstance) {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    const config = routeOf(request).config;
    const code = config?.validationCode ?? 'invalid_request';
    // JSON is UTF-8 (RFC 8259): decoding bad bytes to U+FFFD would store, hash and show the
    // reviewer text the agent never sent.
    if (!isUtf8(bytes)) return done(new AppError(code, 'the body is not valid UTF-8'), undefined);
    const text = bytes.toString('utf8');
    if (text.trim() === '') {
      // handup's cancel takes no body; a client that still says `content-type: application/json`
      // must not get "the body is empty" for it. Routes that do read a body keep that 400.
      if (config?.noBody || config?.optionalBody) return done(null, undefined);
      return done(new AppError(code, 'the body is empty: send a JSON object'), undefined);
    }
    const parsed = parseJson(text);
    if (!parsed.ok) return done(new AppError(code, parsed.message), undefined);
    // A route that reads no body takes none, or `{}`: anything else would be silently ignored.
    if (config?.noBody) {
      const value = parsed.value;
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return done(new AppError(code, 'this route takes no body (or {})'), undefined);
      const [field] = Object.keys(value);
      if (field !== undefined) return done(new AppError(code, `${field}: unknown field (this route takes no body)`), undefined);
      return done(null, undefined);
    }
    done(null, parsed.value);
  });
}

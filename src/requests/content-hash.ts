import { hash } from 'node:crypto';
import { canonicalJson } from '../lib/canonical-json.js';
import type { HandupRequest } from './request-schema.js';

type Hashed = Pick<HandupRequest, 'title' | 'summary' | 'kind' | 'previews' | 'options' | 'input' | 'callback_url'>;

/**
 * `sha256:` + hex SHA-256 of the RFC 8785 canonical JSON of exactly what the reviewer sees
 * (docs/api.md). A decision must echo it, so a request whose content changed cannot be
 * approved by someone who saw the old version.
 */
export function contentHash(r: Hashed): string {
  return hashOf(r, r.previews);
}

/**
 * The content hash of what a person reads, for telling a re-sent request from another: the same
 * as `contentHash` but that the nested fields handup gives defaults (a command's `cwd: null`,
 * `env_keys: []`; a question's `multi: false`; a file's `lang: null`) count the same sent or left
 * out, and every `json` preview an adapter wrote from a value is read as that value, whatever the
 * order of its keys (a bridge that re-serialises a frame, a Go map, a jsonb column, re-sends the
 * same object with its keys in another order).
 */
export function sameContentHash(r: Hashed): string {
  const previews = r.previews.map((p) => withoutDefaults(p.type === 'json' && typeof p.inline === 'string' ? { ...p, inline: parsedJson(p.inline) } : p));
  const input = r.input as { questions?: unknown } | null;
  const questions = Array.isArray(input?.questions) ? { ...input, questions: input.questions.map(withoutDefaults) } : r.input;
  return hashOf({ ...r, input: questions as Hashed['input'] }, previews);
}

/** A value without the members handup's defaults would give it anyway (null, false, "", []), at any depth. */
function withoutDefaults(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDefaults);
  if (value === null || typeof value !== 'object' || 'json' in value) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null || v === false || v === '' || (Array.isArray(v) && v.length === 0)) continue;
    out[k] = withoutDefaults(v);
  }
  return out;
}

/**
 * The value of a preview an adapter wrote (`JSON.stringify(value, null, 2)`), or the text itself
 * when it is anything else: only text that is exactly that serialisation of what it parses to is
 * read as its value, since parsing loses what a person reads in other text (a repeated key,
 * `1.0`, digits past a double's precision, `1e400`).
 */
function parsedJson(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return JSON.stringify(value, null, 2) === text ? { json: value } : text;
  } catch {
    return text;
  }
}

function hashOf(r: Hashed, previews: unknown): string {
  const canonical = canonicalJson({
    title: r.title,
    summary: r.summary,
    kind: r.kind,
    previews,
    options: r.options,
    input: r.input,
    callback_url: r.callback_url,
  });
  return `sha256:${hash('sha256', canonical ?? '', 'hex')}`;
}

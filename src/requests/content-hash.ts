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
 * The content hash with every `json` preview an adapter wrote from a value read as that value,
 * whatever the order of its keys. A native format's JSON preview is text the adapter wrote from an object of the
 * frame, and a bridge that re-serialises the frame (a Go map, a jsonb column) re-sends the same
 * object with its keys in another order: the same content, so the same record.
 */
export function keyOrderFreeHash(r: Hashed): string {
  return hashOf(
    r,
    r.previews.map((p) => (p.type === 'json' && typeof p.inline === 'string' ? { ...p, inline: parsedJson(p.inline) } : p)),
  );
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

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
  const canonical = canonicalJson({
    title: r.title,
    summary: r.summary,
    kind: r.kind,
    previews: r.previews,
    options: r.options,
    input: r.input,
    callback_url: r.callback_url,
  });
  return `sha256:${hash('sha256', canonical ?? '', 'hex')}`;
}

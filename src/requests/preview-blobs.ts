import type { Preview } from './request-schema.js';

/**
 * Every blob hash a request's previews name (`blob`, `before_blob`, `after_blob`, `files[].blob`,
 * `email.attachments[].blob`), each once. A named blob is kept as long as the request is.
 */
export function previewBlobs(previews: readonly Preview[]): string[] {
  const hashes = new Set<string>();
  const add = (h: string | null | undefined) => {
    if (h) hashes.add(h);
  };
  for (const p of previews) {
    add(p.blob);
    add(p.before_blob);
    add(p.after_blob);
    for (const f of p.files ?? []) add(f.blob);
    for (const a of p.email?.attachments ?? []) add(a.blob);
  }
  return [...hashes];
}

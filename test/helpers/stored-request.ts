import { newId } from '../../src/lib/ids.js';
import type { HandupRequest } from '../../src/requests/request-schema.js';
import type { StoredRequest } from '../../src/storage/request-records.js';

/** A pending handup request as the store holds it, for storage tests: `over` the record, `meta` the rest. */
export function storedRequest(over: Partial<HandupRequest> = {}, meta: Partial<StoredRequest> = {}): StoredRequest {
  const now = over.created_at ?? 1_700_000_000_000;
  const record = {
    id: newId(now),
    title: 'Run the migration',
    summary: null,
    kind: 'command',
    risk: 'medium',
    source: { agent: 'bot', session: 's-1', cwd: '/src/app', repo: null, branch: null, integration: null },
    tool: null,
    previews: [],
    options: [
      { id: 'approve', label: 'Approve', outcome: 'approve' },
      { id: 'deny', label: 'Deny', outcome: 'deny' },
    ],
    input: null,
    dedupe_key: null,
    callback_url: null,
    on_timeout: 'expire',
    status: 'pending',
    content_hash: 'sha256:' + '0'.repeat(64),
    created_at: now,
    expires_at: null,
    decision: null,
    ...over,
  } as unknown as HandupRequest;
  return {
    record,
    format: 'handup',
    submitter: 'admin',
    nativeKey: null,
    nativeContext: null,
    nativeReply: null,
    resolvedAt: null,
    ...meta,
  };
}

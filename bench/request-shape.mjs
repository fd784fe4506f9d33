// The bench's stand-in for a stored handup Request: the baselines store and broadcast it, and
// bench/create-sql.mjs inserts it, so their rows weigh what countersign's do.
const DEFAULTS = {
  tool: null,
  callback_url: null,
  summary: null,
  source: { integration: null, agent: null, session: null, cwd: null, repo: null, branch: null, host: null },
  kind: 'custom',
  risk: 'low',
  previews: [],
  options: [
    { id: 'approve', label: 'Approve', outcome: 'approve', style: 'primary' },
    { id: 'deny', label: 'Deny', outcome: 'deny', style: 'danger' },
  ],
  input: null,
  timeout: null,
  on_timeout: 'deny',
  dedupe_key: null,
};
/** A record's JSON from a create body, as the daemon would serve it. */
export const buildRecord = (id, body, now) =>
  JSON.stringify({
    id,
    ...DEFAULTS,
    ...body,
    source: { ...DEFAULTS.source, ...body.source },
    status: 'pending',
    content_hash: `sha256:${'0'.repeat(64)}`,
    created_at: now,
    expires_at: null,
    decision: null,
  });

import { parseDuration } from '../lib/durations.js';
import type { CreateRequestBody, HandupRequest, Option, Preview, Source } from './request-schema.js';

/**
 * A request with every default applied, before the service stamps id, times, status and hash.
 * Every wire format (handup included) produces one of these.
 */
export type RequestDraft = Omit<HandupRequest, 'id' | 'status' | 'content_hash' | 'created_at' | 'expires_at' | 'decision'> & {
  /** Resolved from `timeout`: milliseconds until expiry, or null for none. */
  timeoutMs: number | null;
};

export const DEFAULT_OPTIONS: readonly Option[] = Object.freeze([
  { id: 'approve', label: 'Approve', outcome: 'approve', style: 'primary' },
  { id: 'deny', label: 'Deny', outcome: 'deny', style: 'danger' },
]);
export const QUESTION_OPTIONS: readonly Option[] = Object.freeze([
  { id: 'submit', label: 'Submit', outcome: 'approve', style: 'primary' },
  { id: 'decline', label: 'Decline', outcome: 'deny', style: 'danger' },
]);
export const INFO_OPTIONS: readonly Option[] = Object.freeze([
  { id: 'ok', label: 'OK', outcome: 'approve', style: 'primary' },
  { id: 'dismiss', label: 'Dismiss', outcome: 'deny', style: null },
]);

export interface DraftContext {
  /** `requests.default_timeout` (or a format's own default): a duration or "none". */
  defaultTimeout: string;
  /** Verified submit-token name, or null for the admin token; overwrites the caller's value. */
  integration: string | null;
}

export function draftFromBody(body: CreateRequestBody, ctx: DraftContext): RequestDraft {
  const kind = body.kind ?? 'custom';
  const timeout = body.timeout === undefined ? ctx.defaultTimeout : body.timeout;
  const effectiveTimeout = timeout === null || timeout === 'none' ? null : timeout;
  const options = kind === 'info' ? INFO_OPTIONS : (body.options ?? (kind === 'question' ? QUESTION_OPTIONS : DEFAULT_OPTIONS));

  const draft: RequestDraft = {
    title: body.title,
    callback_url: body.callback_url ?? null,
    summary: body.summary ?? null,
    source: normalizeSource(body.source, ctx.integration),
    kind,
    risk: body.risk ?? 'low',
    previews: (body.previews ?? []).map(normalizePreview),
    options: options.map((o) => ({ ...o })),
    input: kind === 'info' ? null : (body.input ?? null),
    timeout: effectiveTimeout,
    on_timeout: kind === 'info' ? 'expire' : (body.on_timeout ?? 'deny'),
    dedupe_key: body.dedupe_key ?? null,
    timeoutMs: effectiveTimeout === null ? null : mustParse(effectiveTimeout),
  };
  if (body.tool !== undefined) draft.tool = body.tool;
  if (body.run_timeout !== undefined) draft.run_timeout = body.run_timeout;
  return draft;
}

function mustParse(duration: string): number {
  const r = parseDuration(duration);
  if (!r.ok) throw new Error(r.message); // validated at the edge; reaching this is a bug
  return r.ms;
}

function normalizeSource(source: CreateRequestBody['source'], integration: string | null): Source {
  const out: Source = {
    integration,
    agent: source?.agent ?? null,
    session: source?.session ?? null,
    cwd: source?.cwd ?? null,
    repo: source?.repo ?? null,
    branch: source?.branch ?? null,
    host: source?.host ?? null,
  };
  if (source?.session_title != null) out.session_title = source.session_title;
  return out;
}

function normalizePreview(p: NonNullable<CreateRequestBody['previews']>[number]): Preview {
  const { content, ...rest } = p;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) out[k] = v;
  if (content != null) out.inline = content;
  return out as Preview;
}

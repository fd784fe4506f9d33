import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../../lib/canonical-json.js';
import type { CreateRequestBody, HandupRequest } from '../../requests/request-schema.js';
import type { Normalized } from '../adapter.js';
import { asTitle, keyPart } from '../adapter-kit.js';
import { hasCredentials, redactCredentials } from './redact-credentials.js';

/** What every PaperClip sub-protocol shares: schema names, id and status shapes, titles, keys. */

export const REQUEST_V2 = 'paperclip.runtime_request.v2';
export const REQUEST_V1 = 'paperclip.runtime_request.v1';
export const INTERACTION = 'paperclip.interaction_request.v1';
export const EVENT = 'paperclip.prp.event.v1';
export const QUESTION_SET = 'paperclip.question_set.v1';
export const CREATED = 'runtime_request.created';

export const requestId = z.string().min(1).max(160);
export const StatusSchema = z.enum(['pending', 'resolved', 'expired', 'cancelled']);

export const OriginSchema = z.strictObject({
  adapter: z.string().min(1).max(160),
  provider: z.string().min(1).max(160).optional(),
  method: z.string().min(1).max(500).optional(),
});
export type Origin = z.infer<typeof OriginSchema>;

/** Provider-defined and open upstream: only read for presentation hints, never required. */
export const DetailsSchema = z.record(z.string(), z.unknown());
export type Details = z.infer<typeof DetailsSchema>;

export const flag = (ctx: z.RefinementCtx, path: PropertyKey[], message: string) => ctx.addIssue({ code: 'custom', message, path });

/** Flags every repeat of an id (`items[i][key]`) that PaperClip requires to be unique. */
export function unique<K extends string>(ctx: z.RefinementCtx, items: ReadonlyArray<Record<K, string>> | undefined, key: K, path: PropertyKey[], what: string) {
  const seen = new Set<string>();
  (items ?? []).forEach((item, i) => {
    if (seen.has(item[key])) flag(ctx, [...path, i, key], `${what} "${item[key]}" appears more than once`);
    seen.add(item[key]);
  });
}

/** Where a request came from: the event envelope's run, session and turn (all null for a bare request). */
export type Envelope = { runId: string | null; session: string | null; turnId: string | null };
export type Preview = NonNullable<CreateRequestBody['previews']>[number];
/** What a sub-protocol builds from its request; the entry adds the native key. */
export type Built<Ctx> = Omit<Normalized<Ctx>, 'nativeKey'>;

/**
 * `paperclip:{runId or "-"}:{requestId}` (docs/formats/paperclip.md): a bare request has no run.
 * Each id is a keyPart, and a run named `-` is `%2D`, so it is never taken for a bare request.
 */
export const keyOf = (runId: string | null, requestId: string) =>
  `paperclip:${runId === null ? '-' : runId === '-' ? '%2D' : keyPart(runId)}:${keyPart(requestId)}`;

export function source(origin: Origin | undefined, env: Envelope): CreateRequestBody['source'] {
  return { agent: origin?.provider ?? origin?.adapter ?? null, session: env.session };
}

/** Title = the text or its first line when short enough, else the fallback; the full text goes in the summary. */
export function heading(main: string | null | undefined, fallback: string, ...more: Array<string | null | undefined>) {
  const full = main?.trim() ?? '';
  const title = asTitle(full) ?? asTitle(full.split('\n').find((l) => l.trim().length > 0)) ?? fallback;
  const parts = [full && full !== title ? full : null, ...more].filter((s): s is string => typeof s === 'string' && s.trim().length > 0);
  return { title, summary: parts.length > 0 ? parts.join('\n\n') : null };
}

export function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim().length > 0 ? v : undefined;
}

/**
 * A command and a diff where the details carry them, and whatever else they carry as JSON
 * beside (an environment, a sandbox setting: part of what is approved, so a reviewer sees it,
 * the content hash covers it, and a remembered command does not pass it unseen). Built from a
 * copy with credential-like keys redacted: reviewers never see what the driver sent there.
 */
export function detailPreviews(raw: Details): Preview[] {
  const details = redactCredentials(raw);
  const command = text(details.command);
  const diff = text(details.diff);
  const previews: Preview[] = [];
  // The tool is the record's own `tool`.
  const shown = new Set<string>(text(details.toolName) ? ['toolName'] : []);
  if (command) {
    previews.push({ type: 'command', command: { shell: command, cwd: text(details.cwd) ?? null } });
    for (const key of ['command', 'cwd']) shown.add(key);
  }
  if (diff) {
    previews.push({ type: 'diff', title: text(details.path) ?? null, inline: diff });
    for (const key of ['diff', 'path']) shown.add(key);
  }
  const rest = Object.fromEntries(Object.entries(details).filter(([key]) => !shown.has(key)));
  if (Object.keys(rest).length > 0)
    previews.push({ type: 'json', title: previews.length > 0 ? 'Other details' : 'Details', inline: JSON.stringify(rest, null, 2) });
  return previews;
}

/**
 * A digest of the details as sent, where redaction hid some of them from the previews (and so
 * from the content hash): kept in the native context, so a replay whose hidden values differ (a
 * credential helper swapped for a script) is another request, 409, never the earlier decision.
 */
export function hiddenDetails(raw: unknown): { hidden?: string } {
  if (!hasCredentials(raw)) return {};
  return {
    hidden: `sha256:${createHash('sha256')
      .update(canonicalJson(raw) ?? '')
      .digest('hex')}`,
  };
}

/** A reviewer's answers as the decision carries them, keyed by question id. */
export type Answers = Record<string, { selected?: string[]; text?: string | null }>;

/**
 * A question request with a required question that `on_timeout: approve` "submitted": the clock
 * answers nothing, and PaperClip refuses a submit without the required answers, so it gets what
 * a request that ended undecided gets.
 */
export function unansweredByTimeout(record: HandupRequest): boolean {
  if (record.decision?.decided_by !== 'timeout' || record.decision.outcome !== 'approve' || record.kind !== 'question') return false;
  const optional = new Set(record.input?.optional_questions ?? []);
  return (record.input?.questions ?? []).some((q) => !optional.has(q.id));
}

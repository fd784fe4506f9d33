import { z } from 'zod';
import type { HandupRequest, Option } from '../../requests/request-schema.js';
import { distinctLabels, nativeIdOf, safeIds, submitOptions, withNativeIds, type NativeIds } from '../adapter-kit.js';
import {
  DetailsSchema,
  OriginSchema,
  REQUEST_V1,
  StatusSchema,
  detailPreviews,
  hiddenDetails,
  heading,
  requestId,
  source,
  text,
  unique,
  type Built,
  type Envelope,
} from './common.js';
import { QuestionSetSchema } from './question-set.js';
import { questionSetRequest, type RuntimeContext } from './runtime.js';

/**
 * Legacy v1 runtime requests (`paperclip.runtime_request.v1`): free-form choice keys, answered in
 * the phase-2 harness's `{requestId, response}` shape; and v1 elicitations with a question set.
 */

/** v1 is an open object with free-form choice keys (the phase-2 harness used `allow`/`deny`). */
export const V1Schema = z
  .looseObject({
    schema: z.literal(REQUEST_V1),
    requestKind: z.literal('runtime'),
    requestId,
    type: z.enum(['permission', 'input']),
    status: StatusSchema,
    prompt: z.string().min(1).max(4000),
    choices: z.array(z.looseObject({ key: z.string().min(1), label: z.string().min(1) })).optional(),
    details: DetailsSchema.optional(),
  })
  .superRefine((r, ctx) => unique(ctx, r.choices, 'key', ['choices'], 'choice key'));

/**
 * A v1 elicitation carrying a question set: PaperClip's UI renders it as the v2 input form, so it
 * is asked and answered like one (a `request.resolve` command), not in the legacy shape.
 */
export const V1ElicitationSchema = z.looseObject({
  schema: z.literal(REQUEST_V1),
  requestKind: z.literal('elicitation'),
  requestId,
  type: z.string().optional(),
  status: StatusSchema,
  prompt: z.string().min(1).max(4000),
  input: QuestionSetSchema,
  origin: OriginSchema.optional(),
  turnId: z.string().min(1).max(240).optional(),
  details: DetailsSchema.optional(),
});

export function v1ElicitationRequest(r: z.infer<typeof V1ElicitationSchema>, env: Envelope): Built<RuntimeContext> {
  return questionSetRequest(r.prompt, r.input, r, env, r.turnId ?? env.turnId, 'paperclip.runtime_request.v1 elicitation');
}

export type LegacyContext = {
  reply: 'legacy';
  requestId: string;
  type: 'permission' | 'input';
  keys: Array<[label: string, key: string]>;
  /** The choice keys the record's option ids stand for, where they differ (absent: the same). */
  nativeIds?: NativeIds;
  /** A digest of the details as sent, where previews show some redacted (hiddenDetails). */
  hidden?: string;
};

// v1 choice keys are free strings; these words make a key an approval (docs/formats/paperclip.md).
const ALLOW_WORDS = new Set([
  'allow',
  'allowed',
  'approve',
  'approved',
  'accept',
  'accepted',
  'yes',
  'y',
  'ok',
  'okay',
  'confirm',
  'continue',
  'proceed',
  'grant',
  'always',
  'run',
]);
const NEGATIONS = new Set(['no', 'not', 'don', 'dont', 'never', 'deny', 'denied', 'reject', 'decline', 'disallow', 'cancel', 'abort', 'stop', 'block']);

// Words that make an approving key a grant beyond this one call.
const BROAD_WORDS = new Set([
  'always',
  'session',
  'sessions',
  'forever',
  'permanent',
  'permanently',
  'persistent',
  'persist',
  'all',
  'project',
  'projects',
  'workspace',
  'repo',
  'repository',
  'everywhere',
  'global',
  'globally',
  'remember',
  'future',
]);

const keyWords = (key: string) =>
  key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);

/** Whether an approving key grants more than this one call (`alwaysAllow`, `allow_for_session`). */
const broadKey = (key: string) => keyWords(key).some((w) => BROAD_WORDS.has(w));

export function outcomeOfKey(key: string): Option['outcome'] {
  const words = keyWords(key);
  return words.some((w) => ALLOW_WORDS.has(w)) && !words.some((w) => NEGATIONS.has(w)) ? 'approve' : 'deny';
}

/**
 * The approving options with the ones that grant only this call first, in the places approving
 * options had. A rule, auto mode or `on_timeout: approve` takes the first option that approves,
 * and must not answer "always allow" for a runner that listed it first. Read from the choice
 * keys, which the option ids may not repeat.
 */
function narrowestApprovalFirst<O extends { key: string; outcome: Option['outcome'] }>(options: O[]): O[] {
  const broad = (o: O) => broadKey(o.key);
  const approving = options.filter((o) => o.outcome === 'approve');
  const ordered = [...approving.filter((o) => !broad(o)), ...approving.filter(broad)];
  let next = 0;
  return options.map((o) => (o.outcome === 'approve' ? ordered[next++]! : o));
}

export function legacyRequest(r: z.infer<typeof V1Schema>, env: Envelope): Built<LegacyContext> {
  const choices = r.choices ?? [];
  const { title, summary } = heading(r.prompt, r.type === 'input' ? 'Answer the agent' : 'Grant a permission');
  const tool = text(r.details?.toolName);
  // detailPreviews shows details.toolName as the record's tool, not in the JSON.
  const base = { title, summary, source: source(undefined, env), previews: detailPreviews(r.details ?? {}), ...(tool ? { tool } : {}) };
  if (r.type === 'permission') {
    const keyed =
      choices.length > 0
        ? choices
        : [
            { key: 'allow', label: 'Allow' },
            { key: 'deny', label: 'Deny' },
          ];
    // Free-form keys ("allow once") that cannot be option ids get safe ones; the reply sends the key.
    const ids = safeIds(
      keyed.map((c) => c.key),
      'option',
    );
    const keyedOptions = keyed.map((c, i) => {
      const outcome = outcomeOfKey(c.key);
      return { key: c.key, outcome, option: { id: ids.ids[i]!, label: c.label, outcome, style: outcome === 'approve' ? 'primary' : 'danger' } };
    });
    const options = narrowestApprovalFirst(keyedOptions).map((o) => o.option);
    // A grant beyond this call is a person's choice, even where the runner offers nothing narrower.
    const personOnly = keyedOptions.filter((o) => o.outcome === 'approve' && broadKey(o.key)).map((o) => o.option.id);
    return {
      ...(personOnly.length ? { personOnly } : {}),
      request: { ...base, kind: text(r.details?.command) ? 'command' : 'custom', options },
      context: {
        reply: 'legacy',
        requestId: r.requestId,
        type: 'permission',
        keys: keyed.map((c) => [c.label, c.key]),
        ...withNativeIds({ options: ids.map }),
        ...hiddenDetails(r.details),
      },
    };
  }
  const labels = distinctLabels(choices.map((c) => ({ id: c.key, label: c.label })));
  return {
    request: {
      ...base,
      kind: 'question',
      options: submitOptions(),
      input: { questions: [{ id: 'response', question: r.prompt, options: labels.map((label) => ({ label })), allow_free_text: true }] },
    },
    context: { reply: 'legacy', requestId: r.requestId, type: 'input', keys: choices.map((c, i) => [labels[i]!, c.key]), ...hiddenDetails(r.details) },
    notes: ['v1 input has no refusal reply: a decline sends nothing and the runtime expires the request on its own'],
  };
}

export function legacyReply(record: HandupRequest, ctx: LegacyContext): unknown {
  const d = record.decision;
  if (!d) return null;
  if (ctx.type === 'permission') return { requestId: ctx.requestId, response: { decision: nativeIdOf(ctx.nativeIds?.options, d.option) } };
  if (d.outcome !== 'approve') return null;
  const a = d.fields?.answers?.response;
  // A typed answer is what the runtime asked for; a picked choice answers with its key.
  const answer = a?.text?.trim() ? a.text : new Map(ctx.keys).get(a?.selected?.[0] ?? '');
  return answer === undefined ? null : { requestId: ctx.requestId, response: { text: answer } };
}

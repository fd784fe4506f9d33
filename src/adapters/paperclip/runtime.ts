import { z } from 'zod';
import { AppError } from '../../lib/errors.js';
import { MAX_QUESTIONS, type CreateRequestBody, type HandupRequest, type Option } from '../../requests/request-schema.js';
import type { ReplyEnv } from '../adapter.js';
import { asTitle, byNativeId, nativeIdOf, recordIdOf, safeIds, submitOptions, withNativeIds, type IdMap, type NativeIds } from '../adapter-kit.js';
import {
  DetailsSchema,
  OriginSchema,
  REQUEST_V2,
  StatusSchema,
  detailPreviews,
  hiddenDetails,
  heading,
  requestId,
  source,
  text,
  unique,
  unansweredByTimeout,
  type Answers,
  type Built,
  type Details,
  type Envelope,
  type Origin,
} from './common.js';
import {
  QuestionSetSchema,
  checkAnswerForms,
  checkTextValidation,
  mapQuestionSet,
  questionResponse,
  type QuestionMap,
  type QuestionSet,
} from './question-set.js';

/**
 * Runtime requests answered with a `paperclip.prp.command.v1` `request.resolve` command: v2
 * permission approvals, v2 input question sets, and driver-level requests as runners pass them on.
 */

export const ACTIONS = ['accept', 'accept_for_session', 'decline', 'cancel'] as const;
type Action = (typeof ACTIONS)[number];

const ChoiceSchema = z.strictObject({ key: z.enum(ACTIONS), label: z.string().min(1).max(500) });

export const V2PermissionSchema = z
  .strictObject({
    schema: z.literal(REQUEST_V2),
    requestKind: z.literal('permission_approval'),
    requestId,
    type: z.literal('permission'),
    status: StatusSchema,
    prompt: z.string().min(1).max(4000),
    choices: z.array(ChoiceSchema).min(1).max(4),
    details: DetailsSchema.optional(),
    origin: OriginSchema,
    turnId: z.string().min(1).max(240),
    itemId: z.string().min(1).max(240).nullable().optional(),
  })
  .superRefine((r, ctx) => unique(ctx, r.choices, 'key', ['choices'], 'choice key'));

export const V2InputSchema = z.strictObject({
  schema: z.literal(REQUEST_V2),
  requestKind: z.literal('runtime'),
  requestId,
  type: z.literal('input'),
  status: StatusSchema,
  prompt: z.string().min(1).max(4000),
  input: QuestionSetSchema,
  origin: OriginSchema.optional(),
  turnId: z.string().min(1).max(240).optional(),
  itemId: z.string().min(1).max(240).optional(),
});

const DRIVER_KINDS = ['command_approval', 'file_approval', 'permission_approval', 'user_input', 'elicitation'] as const;

/**
 * A driver's own HarnessRuntimeRequest, which runners put in `runtime_request.created` as is
 * (no `schema`, `type` = the provider method): not in the PRP request schema (test/schemas/paperclip-prp-request.schema.json), but seen live.
 */
export const DriverRequestSchema = z
  .looseObject({
    schema: z.undefined().optional(),
    requestKind: z.enum(DRIVER_KINDS),
    requestId,
    method: z.string().optional(),
    type: z.string().optional(),
    turnId: z.string().min(1).max(240).optional(),
    itemId: z.string().nullable().optional(),
    status: StatusSchema.optional(),
    prompt: z.string().max(4000).optional(),
    details: z.looseObject({ fields: z.array(z.looseObject({ name: z.string().min(1).max(128), label: z.string().min(1).optional() })).optional() }).optional(),
    input: QuestionSetSchema.optional(),
    origin: OriginSchema.optional(),
    choices: z.array(ChoiceSchema).min(1).max(4).optional(),
    actions: z.array(z.enum([...ACTIONS, 'submit'])).optional(),
  })
  .superRefine((r, ctx) => unique(ctx, r.choices, 'key', ['choices'], 'choice key'));
export type DriverRequest = z.infer<typeof DriverRequestSchema>;

export type RuntimeForm =
  | { type: 'none' }
  | { type: 'question_set'; questions: QuestionMap[] }
  /** Codex-style user_input: `{answers: {<field>: {answers: [text]}}}`. */
  | { type: 'answers' }
  /** Elicitation: `{content: {<field>: text}}`. */
  | { type: 'content' };

export type RuntimeContext = {
  reply: 'runtime';
  requestId: string;
  turnId: string | null;
  form: RuntimeForm;
  sessionChoice: boolean;
  cancel: boolean;
  /** The native question ids the record's stand for, where they differ (absent: the same). */
  nativeIds?: NativeIds;
  /** A digest of the details as sent, where previews show some redacted (hiddenDetails). */
  hidden?: string;
};

/** PRP's own way to decline a form and end the turn. */
const CANCEL_TURN: Option = { id: 'cancel', label: 'Decline and stop the turn', outcome: 'deny', style: null };

const DEFAULT_LABELS: Record<Action, string> = {
  accept: 'Allow',
  accept_for_session: 'Allow for this session',
  decline: 'Deny',
  cancel: 'Deny and stop the turn',
};
const STYLES: Record<Action, string | null> = { accept: 'primary', accept_for_session: null, decline: 'danger', cancel: null };
const OUTCOMES: Record<Action, Option['outcome']> = { accept: 'approve', accept_for_session: 'approve', decline: 'deny', cancel: 'deny' };

/**
 * The choices with `wider` right after `narrow` when the runner listed it first. Whatever
 * decides without a person choosing (a rule, auto mode, `on_timeout`) takes the first option of
 * its outcome: an approval must allow this call once, not every call of the session, and a
 * denial refuse this call, not stop the whole turn.
 */
function narrowFirst<C extends { key: Action }>(choices: C[], narrow: Action, wider: Action): C[] {
  const at = choices.findIndex((c) => c.key === narrow);
  const wide = choices.findIndex((c) => c.key === wider);
  if (at < 0 || wide < 0 || wide > at) return choices;
  const rest = choices.filter((_, i) => i !== wide);
  const after = rest.findIndex((c) => c.key === narrow);
  return [...rest.slice(0, after + 1), choices[wide]!, ...rest.slice(after + 1)];
}

const narrowestFirst = <C extends { key: Action }>(choices: C[]) => narrowFirst(narrowFirst(choices, 'accept', 'accept_for_session'), 'decline', 'cancel');

/** v2 permission approvals and driver approvals: one option per PRP choice, keyed by action. */
export function approval(
  r: { prompt?: string | undefined; details?: Details | undefined; origin?: Origin | undefined; requestId: string; requestKind: string },
  env: Envelope,
  choices: Array<{ key: Action; label: string }>,
  cancelOnlyIfOffered: boolean,
  turnId: string | null,
): Built<RuntimeContext> {
  const details = r.details ?? {};
  const command = text(details.command);
  const path = text(details.path);
  const kind = r.requestKind === 'file_approval' ? 'edit' : r.requestKind === 'command_approval' || command ? 'command' : 'custom';
  const fallback =
    kind === 'command'
      ? (asTitle(command && `Run ${command}`) ?? 'Approve a command')
      : kind === 'edit'
        ? (asTitle(path && `Change ${path}`) ?? 'Approve a file change')
        : 'Grant a permission';
  const { title, summary } = heading(r.prompt, fallback);
  const keys = choices.map((c) => c.key);
  const request: CreateRequestBody = {
    title,
    summary,
    kind,
    source: source(r.origin, env),
    previews: detailPreviews(details),
    options: narrowestFirst(choices).map((c) => ({ id: c.key, label: c.label, outcome: OUTCOMES[c.key], style: STYLES[c.key] })),
  };
  const tool = text(details.toolName);
  if (tool) request.tool = tool;
  return {
    // Allowing every call of the session is a person's choice, even where the runner offers nothing narrower.
    ...(keys.includes('accept_for_session') ? { personOnly: ['accept_for_session'] } : {}),
    request,
    context: {
      reply: 'runtime',
      requestId: r.requestId,
      turnId,
      form: { type: 'none' },
      sessionChoice: keys.includes('accept_for_session'),
      // The harness takes `cancel` from any approval, but a v2 request lists what its UI offers.
      cancel: !cancelOnlyIfOffered || keys.includes('cancel'),
      ...hiddenDetails(r.details),
    },
  };
}

export function questionSetRequest(
  prompt: string | undefined,
  set: QuestionSet,
  r: { requestId: string; origin?: Origin | undefined },
  env: Envelope,
  turnId: string | null,
  what: string,
): Built<RuntimeContext> {
  const mapped = mapQuestionSet(set);
  const { title, summary } = heading(set.title ?? prompt, 'Answer the agent', set.title ? prompt : undefined, set.description);
  return {
    request: {
      title,
      summary,
      kind: 'question',
      source: source(r.origin, env),
      previews: mapped.previews,
      options: [...submitOptions(set.submitLabel), CANCEL_TURN],
      input: { questions: mapped.questions, ...(mapped.optional.length ? { optional_questions: mapped.optional } : {}) },
    },
    context: {
      reply: 'runtime',
      requestId: r.requestId,
      turnId,
      form: { type: 'question_set', questions: mapped.maps },
      sessionChoice: false,
      cancel: true,
      ...withNativeIds({ questions: mapped.questionIds }),
    },
    notes: mapped.notes.map((n) => `${what}: ${n}`),
  };
}

export function driverRequest(r: DriverRequest, env: Envelope): Built<RuntimeContext> {
  const turnId = r.turnId ?? env.turnId;
  const fields = r.details?.fields ?? [];
  if (r.requestKind === 'user_input' || r.requestKind === 'elicitation') {
    if (r.input) return questionSetRequest(r.prompt, r.input, r, env, turnId, r.requestKind);
    if (fields.length > 0) return fieldForm(r, env, fields, turnId);
    if (r.requestKind === 'user_input') {
      throw new AppError('invalid_frame', 'payload.request: a user_input request needs input (a paperclip.question_set.v1) or details.fields to ask anything');
    }
  }
  // An elicitation without a form is a plain accept/decline; the harness refuses accept_for_session for it.
  const allowed: Action[] = r.requestKind === 'elicitation' ? ['accept', 'decline', 'cancel'] : [...ACTIONS];
  const labels = r.requestKind === 'elicitation' ? ELICITATION_LABELS : DEFAULT_LABELS;
  const choices = r.requestKind === 'elicitation' ? r.choices?.filter((c) => c.key !== 'accept_for_session') : r.choices;
  const offered = choices ?? (r.actions ?? allowed).filter((a): a is Action => allowed.includes(a as Action)).map((key) => ({ key, label: labels[key] }));
  if (offered.length === 0) throw new AppError('invalid_frame', `payload.request.${r.choices ? 'choices' : 'actions'}: no action a reviewer could take`);
  return approval(r, env, offered, Boolean(r.choices ?? r.actions), turnId);
}

const ELICITATION_LABELS: Record<Action, string> = {
  accept: 'Accept',
  accept_for_session: 'Accept for this session',
  decline: 'Decline',
  cancel: 'Cancel',
};

/** Driver forms (`details.fields`): one free-text question per field, named by the field. */
function fieldForm(
  r: DriverRequest,
  env: Envelope,
  fields: ReadonlyArray<{ name: string; label?: string | undefined }>,
  turnId: string | null,
): Built<RuntimeContext> {
  if (fields.length > MAX_QUESTIONS) {
    throw new AppError(
      'invalid_frame',
      `details.fields: countersign accepts at most ${MAX_QUESTIONS} fields (one question each) per request; this frame has ${fields.length}`,
    );
  }
  const { title, summary } = heading(r.prompt, 'Answer the agent');
  const ids = safeIds(
    fields.map((f) => f.name),
    'question',
  );
  return {
    request: {
      title,
      summary,
      kind: 'question',
      source: source(r.origin, env),
      options: [...submitOptions(), CANCEL_TURN],
      input: { questions: fields.map((f, i) => ({ id: ids.ids[i]!, question: f.label ?? f.name, allow_free_text: true })) },
    },
    context: {
      reply: 'runtime',
      requestId: r.requestId,
      turnId,
      form: { type: r.requestKind === 'elicitation' ? 'content' : 'answers' },
      sessionChoice: false,
      cancel: true,
      ...withNativeIds({ questions: ids.map }),
    },
  };
}

// ---- handup decision → request.resolve ----

const COMMAND = 'paperclip.prp.command.v1';

/** A question-set answer is held to the form PaperClip takes and each question's textValidation before it is stored. */
export function checkRuntimeDecision(record: HandupRequest, ctx: RuntimeContext): void {
  const d = record.decision;
  if (d?.outcome === 'approve' && ctx.form.type === 'question_set') {
    const answers = (d.fields?.answers ?? {}) as Answers;
    checkAnswerForms(ctx.form.questions, answers, ctx.nativeIds?.questions);
    checkTextValidation(ctx.form.questions, answers, ctx.nativeIds?.questions);
  }
}

/**
 * A stored `request.resolve` command with the bridge's `controllerSeq` and a fresh commandId (the
 * runner takes a command only as its controller's next; docs/formats/paperclip.md). Other replies take none.
 */
export function sequenceCommand(reply: unknown, seq: number, env: Pick<ReplyEnv, 'ulid'>): unknown {
  const command = reply as { schema?: unknown } | null;
  if (command === null || typeof command !== 'object' || command.schema !== COMMAND) return null;
  return { ...command, commandId: env.ulid(), controllerSeq: seq };
}

export function runtimeReply(record: HandupRequest, ctx: RuntimeContext, env: ReplyEnv): unknown {
  const resolution = runtimeResolution(record, ctx);
  if (!resolution) return null;
  return {
    schema: COMMAND,
    commandId: env.ulid(),
    controllerSeq: 1,
    type: 'request.resolve',
    issuedAt: new Date(env.now).toISOString(),
    payload: { requestId: ctx.requestId, ...(ctx.turnId ? { turnId: ctx.turnId } : {}), resolution },
  };
}

function runtimeResolution(record: HandupRequest, ctx: RuntimeContext): Record<string, unknown> | null {
  const d = record.decision;
  // Cancelled here, or expired with on_timeout "expire": PRP's own way to abandon a request is `cancel`.
  if (!d || unansweredByTimeout(record)) return ctx.cancel ? { action: 'cancel' } : null;
  if (d.outcome === 'approve' && ctx.form.type !== 'none') return submission(ctx.form, (d.fields?.answers ?? {}) as Answers, ctx.nativeIds?.questions);
  if (d.outcome === 'approve' && d.scope === 'session' && ctx.sessionChoice) return { action: 'accept_for_session' };
  return { action: d.option };
}

/**
 * The answers a `runtime_request.resolved` reports for a form settled upstream, as the record's
 * decision keeps them (submission read backwards): keyed by the record's question ids, option
 * ids back to their labels, typed text as text. What names no question (`asked`: the record's
 * question ids) or option of the form is left out; null when nothing is left.
 */
export function answersFromResolution(
  form: RuntimeForm,
  payload: Record<string, unknown>,
  questionIds: IdMap | undefined,
  asked: ReadonlySet<string>,
): Answers | null {
  const out: Answers = {};
  // Kept under the record's question whose native id is this one (an id the map leads elsewhere names none).
  const put = (nativeId: string, answer: Answers[string]) => {
    const id = recordIdOf(questionIds, nativeId);
    if (asked.has(id) && nativeIdOf(questionIds, id) === nativeId) out[id] = answer;
  };
  const entries = (v: unknown) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? Object.entries(v) : []);
  const texts = (v: unknown) => (Array.isArray(v) ? v.filter((t): t is string => typeof t === 'string') : typeof v === 'string' ? [v] : []);
  if (form.type === 'question_set') {
    const response = payload.response as { answers?: unknown } | undefined;
    for (const [nativeId, raw] of entries(response?.answers)) {
      const q = form.questions.find((m) => m.id === nativeId);
      if (!q || typeof raw !== 'object' || raw === null) continue;
      const a = raw as { selectedOptionIds?: unknown; text?: unknown; customText?: unknown };
      const selected = texts(a.selectedOptionIds).flatMap((id) => q.options.filter(([, o]) => o === id).map(([label]) => label));
      const typed = [a.text, a.customText].find((t): t is string => typeof t === 'string' && t.trim() !== '');
      if (selected.length > 0 || typed !== undefined) put(nativeId, { selected, ...(typed !== undefined ? { text: typed } : {}) });
    }
  } else if (form.type === 'answers') {
    for (const [nativeId, raw] of entries(payload.answers)) {
      const typed = texts((raw as { answers?: unknown } | null)?.answers).join(', ');
      if (typed.trim()) put(nativeId, { selected: [], text: typed });
    }
  } else if (form.type === 'content') {
    for (const [nativeId, raw] of entries(payload.content)) {
      const typed = typeof raw === 'string' ? raw : typeof raw === 'number' || typeof raw === 'boolean' ? String(raw) : '';
      if (typed.trim()) put(nativeId, { selected: [], text: typed });
    }
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** The form's answers keyed by the native field and question ids the record's stand for. */
function submission(form: Exclude<RuntimeForm, { type: 'none' }>, answers: Answers, questionIds: IdMap | undefined): Record<string, unknown> {
  const typed = () => Object.entries(answers).flatMap(([id, a]) => (a.text?.trim() ? [[nativeIdOf(questionIds, id), a.text] as const] : []));
  if (form.type === 'answers') return { action: 'submit', answers: byNativeId(typed().map(([id, text]) => [id, { answers: [text] }])) };
  if (form.type === 'content') return { action: 'submit', content: byNativeId(typed()) };
  return { action: 'submit', response: questionResponse(form.questions, answers, questionIds) };
}

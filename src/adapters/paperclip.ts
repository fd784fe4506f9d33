import { z } from 'zod';
import { AppError } from '../errors.js';
import type { CreateRequestBody, HandupRequest, Option, Question } from '../requests/request-schema.js';
import type { FollowUp, Normalized, ReplyEnv, WireAdapter } from './adapter.js';
import { asTitle } from './shared.js';

/**
 * PaperClip Runner Protocol (formats.md §2). Runtime requests (v2 permission approvals, v2
 * question sets, driver-level requests) are answered with a `paperclip.prp.command.v1`
 * `request.resolve` command; v1 requests in the legacy `{requestId, response}` shape; issue-thread
 * interactions with the body PaperClip's interaction routes take.
 */

const REQUEST_V2 = 'paperclip.runtime_request.v2';
const REQUEST_V1 = 'paperclip.runtime_request.v1';
const INTERACTION = 'paperclip.interaction_request.v1';
const EVENT = 'paperclip.prp.event.v1';
const QUESTION_SET = 'paperclip.question_set.v1';
const CREATED = 'runtime_request.created';

/** handup's limits a PaperClip frame can exceed (product.md §9); refused, never truncated. */
const MAX_QUESTIONS = 10;
const MAX_QUESTION_OPTIONS = 32;
const MAX_FIELDS = 64;
/** handup's limit on a question's text: a helpText that would pass it is left out instead. */
const MAX_QUESTION_BYTES = 4096;
/** PaperClip's interaction routes take a reason of at most 4000 characters. */
const MAX_REASON_CHARS = 4000;

// ---- Frames, in PaperClip's own field names (request.schema.json, question-set.schema.json) ----

const requestId = z.string().min(1).max(160);
const StatusSchema = z.enum(['pending', 'resolved', 'expired', 'cancelled']);
const ACTIONS = ['accept', 'accept_for_session', 'decline', 'cancel'] as const;
type Action = (typeof ACTIONS)[number];

const OriginSchema = z.strictObject({
  adapter: z.string().min(1).max(160),
  provider: z.string().min(1).max(160).optional(),
  method: z.string().min(1).max(500).optional(),
});
type Origin = z.infer<typeof OriginSchema>;

/** Provider-defined and open upstream: only read for presentation hints, never required. */
const DetailsSchema = z.record(z.string(), z.unknown());
type Details = z.infer<typeof DetailsSchema>;

const ChoiceSchema = z.strictObject({ key: z.enum(ACTIONS), label: z.string().min(1).max(500) });

const flag = (ctx: z.RefinementCtx, path: PropertyKey[], message: string) => ctx.addIssue({ code: 'custom', message, path });

/** Flags every repeat of an id (`items[i][key]`) that PaperClip requires to be unique. */
function unique<K extends string>(
  ctx: z.RefinementCtx,
  items: ReadonlyArray<Record<K, string>> | undefined,
  key: K,
  path: PropertyKey[],
  what: string,
) {
  const seen = new Set<string>();
  (items ?? []).forEach((item, i) => {
    if (seen.has(item[key])) flag(ctx, [...path, i, key], `${what} "${item[key]}" appears more than once`);
    seen.add(item[key]);
  });
}

const QuestionOptionSchema = z.strictObject({
  id: z.string().min(1).max(160),
  label: z.string().min(1).max(1000),
  description: z.string().max(4000).optional(),
  recommended: z.boolean().optional(),
});

const QuestionSetQuestionSchema = z
  .strictObject({
    id: z.string().min(1).max(160),
    header: z.string().max(1000).optional(),
    prompt: z.string().min(1).max(4000),
    helpText: z.string().max(4000).optional(),
    required: z.boolean(),
    answerMode: z.enum(['single_select', 'multi_select', 'text']),
    intent: z.enum(['decision', 'information']).optional(),
    recommendationRationale: z.string().max(4000).optional(),
    options: z.array(QuestionOptionSchema).max(128).optional(),
    customAnswer: z
      .strictObject({ enabled: z.literal(true), label: z.string().max(1000).optional(), placeholder: z.string().max(1000).optional() })
      .optional(),
    textValidation: z
      .strictObject({
        minLength: z.number().int().min(0).max(100000).optional(),
        maxLength: z.number().int().min(0).max(100000).optional(),
        pattern: z.string().max(1000).optional(),
        inputType: z.enum(['text', 'number', 'integer']).optional(),
        minimum: z.number().optional(),
        maximum: z.number().optional(),
      })
      .optional(),
  })
  .superRefine((q, ctx) => {
    const options = q.options ?? [];
    if (q.answerMode === 'text' && options.length > 0) flag(ctx, ['options'], 'text questions cannot define options');
    if (q.answerMode === 'text' && q.customAnswer) flag(ctx, ['customAnswer'], 'text questions do not use a custom answer');
    if (q.answerMode !== 'text' && options.length === 0) flag(ctx, ['options'], 'select questions need at least one option');
    unique(ctx, options, 'id', ['options'], 'option id');
    if (options.filter((o) => o.recommended).length > 1) flag(ctx, ['options'], 'at most one option may be recommended');
  });
type QuestionSetQuestion = z.infer<typeof QuestionSetQuestionSchema>;

const QuestionSetSchema = z
  .strictObject({
    schema: z.literal(QUESTION_SET),
    title: z.string().max(1000).optional(),
    description: z.string().max(4000).optional(),
    submitLabel: z.string().max(200).optional(),
    questions: z.array(QuestionSetQuestionSchema).min(1).max(64),
  })
  .superRefine((set, ctx) => unique(ctx, set.questions, 'id', ['questions'], 'question id'));
type QuestionSet = z.infer<typeof QuestionSetSchema>;

const V2PermissionSchema = z
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

const V2InputSchema = z.strictObject({
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

/** v1 is an open object with free-form choice keys (the phase-2 harness used `allow`/`deny`). */
const V1Schema = z
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

// Issue-thread payloads: the create schemas of PaperClip's interaction routes.
const markdown = z.string().max(20000).nullable().optional();
const buttonLabel = z.string().min(1).max(80).nullable().optional();

const ConfirmationPayload = z.looseObject({
  version: z.literal(1).optional(),
  prompt: z.string().min(1).max(1000),
  acceptLabel: buttonLabel,
  rejectLabel: buttonLabel,
  rejectRequiresReason: z.boolean().optional(),
  allowDeclineReason: z.boolean().optional(),
  detailsMarkdown: markdown,
  toolAction: z
    .looseObject({
      toolName: z.string().min(1).max(500),
      toolDisplayName: z.string().min(1).max(500).optional(),
      risk: z.enum(['write', 'destructive']),
      previewMarkdown: z.string().max(20000).optional(),
      argumentsSummaryJson: z.string().max(20000).optional(),
    })
    .optional(),
});

const CheckboxPayload = z
  .looseObject({
    version: z.literal(1).optional(),
    prompt: z.string().min(1).max(1000),
    detailsMarkdown: markdown,
    options: z
      .array(
        z.looseObject({ id: z.string().min(1).max(120), label: z.string().min(1).max(120), description: z.string().max(500).nullable().optional() }),
      )
      .min(1)
      .max(200),
    defaultSelectedOptionIds: z.array(z.string().min(1).max(120)).optional(),
    minSelected: z.number().int().min(0).optional(),
    maxSelected: z.number().int().min(0).nullable().optional(),
    acceptLabel: buttonLabel,
    rejectLabel: buttonLabel,
    rejectRequiresReason: z.boolean().optional(),
    allowDeclineReason: z.boolean().optional(),
  })
  .superRefine((p, ctx) => {
    unique(ctx, p.options, 'id', ['options'], 'option id');
    const ids = new Set(p.options.map((o) => o.id));
    (p.defaultSelectedOptionIds ?? []).forEach((id, i) => {
      if (!ids.has(id)) flag(ctx, ['defaultSelectedOptionIds', i], `"${id}" is not an option id`);
    });
  });

const VERDICTS = ['approve', 'reject', 'defer'] as const;
type Verdict = (typeof VERDICTS)[number];
const VerdictsPayload = z
  .looseObject({
    version: z.literal(1).optional(),
    prompt: z.string().min(1).max(1000),
    detailsMarkdown: markdown,
    items: z
      .array(
        z.looseObject({
          id: z.string().min(1).max(120),
          label: z.string().min(1).max(120),
          description: z.string().max(500).nullable().optional(),
          previewMarkdown: markdown,
        }),
      )
      .min(1)
      .max(200),
    verdicts: z.array(z.enum(VERDICTS)).min(2).max(3).optional(),
    requireReasonOn: z.array(z.enum(VERDICTS)).max(3).optional(),
  })
  .superRefine((p, ctx) => {
    unique(ctx, p.items, 'id', ['items'], 'item id');
    const verdicts = p.verdicts ?? ['approve', 'reject'];
    if (!verdicts.includes('approve') || !verdicts.includes('reject') || new Set(verdicts).size !== verdicts.length) {
      flag(ctx, ['verdicts'], 'verdicts must include approve and reject once each; defer is optional');
    }
  });

const AskQuestionsPayload = z
  .looseObject({
    version: z.literal(1).optional(),
    title: z.string().max(240).nullable().optional(),
    submitLabel: z.string().max(120).nullable().optional(),
    questions: z
      .array(
        z.looseObject({
          id: z.string().min(1).max(120),
          prompt: z.string().min(1).max(500),
          helpText: z.string().max(1000).nullable().optional(),
          selectionMode: z.enum(['single', 'multi']),
          required: z.boolean().optional(),
          options: z
            .array(
              z.looseObject({
                id: z.string().min(1).max(120),
                label: z.string().min(1).max(120),
                description: z.string().max(500).nullable().optional(),
                freeText: z.boolean().optional(),
              }),
            )
            .min(1)
            .max(10),
        }),
      )
      .min(1)
      .max(10),
  })
  .superRefine((p, ctx) => {
    unique(ctx, p.questions, 'id', ['questions'], 'question id');
    p.questions.forEach((q, i) => {
      unique(ctx, q.options, 'id', ['questions', i, 'options'], 'option id');
      if (q.options.filter((o) => o.freeText).length > 1) flag(ctx, ['questions', i, 'options'], 'a question may declare at most one free-text option');
    });
  });

const SuggestTasksPayload = z
  .looseObject({
    version: z.literal(1).optional(),
    tasks: z
      .array(
        z.looseObject({
          clientKey: z.string().min(1).max(120),
          title: z.string().min(1).max(240),
          description: z.string().max(20000).nullable().optional(),
        }),
      )
      .min(1)
      .max(50),
  })
  .superRefine((p, ctx) => unique(ctx, p.tasks, 'clientKey', ['tasks'], 'clientKey'));

const interaction = <K extends string, P extends z.ZodType>(kind: K, payload: P) =>
  z.looseObject({
    schema: z.literal(INTERACTION),
    requestKind: z.literal('issue_thread'),
    requestId,
    kind: z.literal(kind),
    blocking: z.boolean(),
    payload,
    title: z.string().max(240).nullable().optional(),
    summary: z.string().max(1000).nullable().optional(),
  });

const InteractionSchema = z.discriminatedUnion('kind', [
  interaction('request_confirmation', ConfirmationPayload),
  interaction('request_checkbox_confirmation', CheckboxPayload),
  interaction('request_item_verdicts', VerdictsPayload),
  interaction('ask_user_questions', AskQuestionsPayload),
  interaction('suggest_tasks', SuggestTasksPayload),
]);
type Interaction = z.infer<typeof InteractionSchema>;

const DRIVER_KINDS = ['command_approval', 'file_approval', 'permission_approval', 'user_input', 'elicitation'] as const;

/**
 * A driver's own HarnessRuntimeRequest, which runners put in `runtime_request.created` as is
 * (no `schema`, `type` = the provider method): not in request.schema.json, but seen live.
 */
const DriverRequestSchema = z
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
    details: z
      .looseObject({ fields: z.array(z.looseObject({ name: z.string().min(1).max(128), label: z.string().min(1).optional() })).optional() })
      .optional(),
    input: QuestionSetSchema.optional(),
    origin: OriginSchema.optional(),
    choices: z.array(ChoiceSchema).min(1).max(4).optional(),
    actions: z.array(z.enum([...ACTIONS, 'submit'])).optional(),
  })
  .superRefine((r, ctx) => unique(ctx, r.choices, 'key', ['choices'], 'choice key'));
type DriverRequest = z.infer<typeof DriverRequestSchema>;

const requestOptions = [z.discriminatedUnion('requestKind', [V2PermissionSchema, V2InputSchema]), V1Schema, InteractionSchema] as const;
const noMatch = (message: string) => (issue: { code?: string; note?: string }) =>
  issue.code === 'invalid_union' && issue.note ? message : undefined;

const EventRequestSchema = z.discriminatedUnion('schema', [...requestOptions, DriverRequestSchema], {
  error: noMatch(`must be "${REQUEST_V2}", "${REQUEST_V1}" or "${INTERACTION}", or absent for a driver request`),
});
type PrpRequest = z.infer<typeof EventRequestSchema>;

/** The PRP event envelope (research §1.2); only `runtime_request.created` carries a request. */
const EventSchema = z
  .looseObject({
    schema: z.literal(EVENT),
    eventType: z.string().min(1),
    runId: z.string().min(1).max(160),
    normalizedSessionId: z.string().min(1).max(160).optional(),
    turnId: z.string().min(1).max(160).optional(),
    payload: z.looseObject({ request: EventRequestSchema.optional() }),
  })
  .superRefine((e, ctx) => {
    if (e.eventType === CREATED && !e.payload.request) flag(ctx, ['payload', 'request'], `${CREATED} needs a request`);
  });

const FrameSchema = z.discriminatedUnion('schema', [EventSchema, ...requestOptions], {
  error: noMatch(`must be "${EVENT}", "${REQUEST_V2}", "${REQUEST_V1}" or "${INTERACTION}"`),
});
type PaperclipFrame = z.infer<typeof FrameSchema>;

const TERMINAL_EVENTS = ['runtime_request.resolved', 'runtime_request.cancelled', 'runtime_request.expired'];
const FollowUpSchema = z
  .looseObject({
    schema: z.literal(EVENT),
    eventType: z.string().min(1),
    runId: z.string().min(1).max(160),
    payload: z.looseObject({ requestId: requestId.optional(), action: z.string().min(1).optional() }),
  })
  .superRefine((e, ctx) => {
    if (TERMINAL_EVENTS.includes(e.eventType) && !e.payload.requestId) {
      flag(ctx, ['payload', 'requestId'], `${e.eventType} needs the requestId it settles`);
    }
  });
type PaperclipFollowUp = z.infer<typeof FollowUpSchema>;

// ---- Native context: what renderReply needs ----

/** A handup question's option labels back to PaperClip option ids. */
interface QuestionMap {
  id: string;
  mode: 'single' | 'multi' | 'text';
  /** Free text goes back as `customText` (question sets) or `otherText` (issue threads). */
  custom: boolean;
  /** The free-text option of an issue-thread question, selected whenever text is sent. */
  freeTextOption?: string | null;
  options: Array<[label: string, id: string]>;
}

type RuntimeForm =
  | { type: 'none' }
  | { type: 'question_set'; questions: QuestionMap[] }
  /** Codex-style user_input: `{answers: {<field>: {answers: [text]}}}`. */
  | { type: 'answers' }
  /** Elicitation: `{content: {<field>: text}}`. */
  | { type: 'content' };

type PaperclipContext =
  | { reply: 'runtime'; requestId: string; turnId: string | null; form: RuntimeForm; sessionChoice: boolean; cancel: boolean }
  | { reply: 'legacy'; requestId: string; type: 'permission' | 'input'; keys: Array<[label: string, key: string]> }
  | { reply: 'interaction'; requestId: string; kind: 'request_confirmation'; reason: boolean }
  | {
      reply: 'interaction';
      requestId: string;
      kind: 'request_checkbox_confirmation';
      reason: boolean;
      options: string[];
      defaults: string[];
    }
  | {
      reply: 'interaction';
      requestId: string;
      kind: 'request_item_verdicts';
      items: Array<{ id: string; verdicts: Array<[label: string, verdict: Verdict]> }>;
    }
  | { reply: 'interaction'; requestId: string; kind: 'ask_user_questions'; questions: QuestionMap[] }
  | { reply: 'interaction'; requestId: string; kind: 'suggest_tasks'; keys: string[] };

type Envelope = { runId: string | null; session: string | null; turnId: string | null };
type Preview = NonNullable<CreateRequestBody['previews']>[number];
type Built = Normalized<PaperclipContext>;

// ---- Frame → handup Request ----

function normalize(frame: PaperclipFrame): Built {
  if (frame.schema !== EVENT) return normalizeRequest(frame, { runId: null, session: null, turnId: null });
  if (frame.eventType !== CREATED || !frame.payload.request) {
    throw new AppError('unsupported_frame', `eventType "${frame.eventType}" asks nothing of a reviewer; only ${CREATED} carries a request`);
  }
  return normalizeRequest(frame.payload.request, {
    runId: frame.runId,
    session: frame.normalizedSessionId ?? frame.runId,
    turnId: frame.turnId ?? null,
  });
}

function normalizeRequest(request: PrpRequest, env: Envelope): Built {
  if ('status' in request && request.status !== undefined && request.status !== 'pending') {
    throw new AppError('unsupported_frame', `status "${request.status}": the request is no longer pending, so there is nothing to decide`);
  }
  const built = buildRequest(request, env);
  const nativeKey = keyOf(env.runId, request.requestId);
  return { ...built, request: { ...built.request, dedupe_key: nativeKey }, nativeKey };
}

/** `paperclip:{runId or "-"}:{requestId}` (formats.md §2): a bare request has no run. */
const keyOf = (runId: string | null, requestId: string) => `paperclip:${runId ?? '-'}:${requestId}`;

function buildRequest(r: PrpRequest, env: Envelope): Omit<Built, 'nativeKey'> {
  if (r.schema === REQUEST_V2 && r.requestKind === 'permission_approval') {
    return approval(r, env, r.choices, true, r.turnId);
  }
  if (r.schema === REQUEST_V2) {
    return questionSetRequest(r.prompt, r.input, r, env, r.turnId ?? env.turnId, 'paperclip.runtime_request.v2 input');
  }
  if (r.schema === REQUEST_V1) return legacy(r, env);
  if (r.schema === INTERACTION) return issueThread(r, env);
  return driver(r, env);
}

const DEFAULT_LABELS: Record<Action, string> = {
  accept: 'Allow',
  accept_for_session: 'Allow for this session',
  decline: 'Deny',
  cancel: 'Deny and stop the turn',
};
const STYLES: Record<Action, string | null> = { accept: 'primary', accept_for_session: null, decline: 'danger', cancel: null };
const OUTCOMES: Record<Action, Option['outcome']> = { accept: 'approve', accept_for_session: 'approve', decline: 'deny', cancel: 'deny' };

/** v2 permission approvals and driver approvals: one option per PRP choice, keyed by action. */
function approval(
  r: { prompt?: string | undefined; details?: Details | undefined; origin?: Origin | undefined; requestId: string; requestKind: string },
  env: Envelope,
  choices: Array<{ key: Action; label: string }>,
  cancelOnlyIfOffered: boolean,
  turnId: string | null,
): Omit<Built, 'nativeKey'> {
  const details = r.details ?? {};
  const command = text(details.command);
  const path = text(details.path);
  const kind = r.requestKind === 'file_approval' ? 'edit' : r.requestKind === 'command_approval' || command ? 'command' : 'custom';
  const fallback =
    kind === 'command'
      ? asTitle(command && `Run ${command}`) ?? 'Approve a command'
      : kind === 'edit'
        ? asTitle(path && `Change ${path}`) ?? 'Approve a file change'
        : 'Grant a permission';
  const { title, summary } = heading(r.prompt, fallback);
  const keys = choices.map((c) => c.key);
  const request: CreateRequestBody = {
    title,
    summary,
    kind,
    source: source(r.origin, env),
    previews: detailPreviews(details),
    options: choices.map((c) => ({ id: c.key, label: c.label, outcome: OUTCOMES[c.key], style: STYLES[c.key] })),
  };
  const tool = text(details.toolName);
  if (tool) request.tool = tool;
  return {
    request,
    context: {
      reply: 'runtime',
      requestId: r.requestId,
      turnId,
      form: { type: 'none' },
      sessionChoice: keys.includes('accept_for_session'),
      // The harness takes `cancel` from any approval, but a v2 request lists what its UI offers.
      cancel: !cancelOnlyIfOffered || keys.includes('cancel'),
    },
  };
}

/** A command or diff when the details say so; otherwise the details themselves, as JSON. */
function detailPreviews(details: Details): Preview[] {
  const command = text(details.command);
  const diff = text(details.diff);
  if (command) return [{ type: 'command', command: { shell: command, cwd: text(details.cwd) ?? null } }];
  if (diff) return [{ type: 'diff', title: text(details.path) ?? null, inline: diff }];
  if (Object.keys(details).length === 0) return [];
  return [{ type: 'json', title: 'Details', inline: JSON.stringify(details, null, 2) }];
}

function questionSetRequest(
  prompt: string | undefined,
  set: QuestionSet,
  r: { requestId: string; origin?: Origin | undefined },
  env: Envelope,
  turnId: string | null,
  what: string,
): Omit<Built, 'nativeKey'> {
  const mapped = mapQuestionSet(set);
  const { title, summary } = heading(set.title ?? prompt, 'Answer the agent', set.title ? prompt : undefined, set.description);
  return {
    request: {
      title,
      summary,
      kind: 'question',
      source: source(r.origin, env),
      previews: mapped.previews,
      options: [
        { id: 'submit', label: set.submitLabel?.trim() || 'Submit', outcome: 'approve', style: 'primary' },
        { id: 'decline', label: 'Decline', outcome: 'deny', style: 'danger' },
        { id: 'cancel', label: 'Decline and stop the turn', outcome: 'deny', style: null },
      ],
      input: { questions: mapped.questions },
    },
    context: {
      reply: 'runtime',
      requestId: r.requestId,
      turnId,
      form: { type: 'question_set', questions: mapped.maps },
      sessionChoice: false,
      cancel: true,
    },
    notes: mapped.notes.map((n) => `${what}: ${n}`),
  };
}

function mapQuestionSet(set: QuestionSet) {
  if (set.questions.length > MAX_QUESTIONS) {
    throw new AppError(
      'invalid_frame',
      `input.questions: countersign accepts at most ${MAX_QUESTIONS} questions per request; this question set has ${set.questions.length}`,
    );
  }
  const questions: Question[] = [];
  const maps: QuestionMap[] = [];
  const previews: Preview[] = [];
  const notes: string[] = [];
  set.questions.forEach((q, i) => {
    const options = q.options ?? [];
    if (options.length > MAX_QUESTION_OPTIONS) {
      throw new AppError(
        'invalid_frame',
        `input.questions[${i}].options: countersign accepts at most ${MAX_QUESTION_OPTIONS} options per question; ` +
          `question "${q.id}" has ${options.length}`,
      );
    }
    const labels = distinctLabels(options);
    const recommended = options.findIndex((o) => o.recommended);
    const question: Question = {
      id: q.id,
      question: withHelp(q.prompt, q.helpText),
      options: options.map((o, j) => ({ label: labels[j]!, ...(o.description ? { description: o.description } : {}) })),
      multi: q.answerMode === 'multi_select',
      allow_free_text: q.answerMode === 'text' || q.customAnswer?.enabled === true,
    };
    if (q.header) question.header = q.header;
    if (recommended >= 0) question.recommended = recommended;
    questions.push(question);
    maps.push({
      id: q.id,
      mode: q.answerMode === 'text' ? 'text' : q.answerMode === 'multi_select' ? 'multi' : 'single',
      custom: q.customAnswer?.enabled === true,
      options: options.map((o, j) => [labels[j]!, o.id]),
    });
    if (q.recommendationRationale?.trim()) {
      previews.push({ type: 'markdown', title: `Recommendation for ${q.id}`, inline: q.recommendationRationale });
    }
    notes.push(...questionNotes(q, labels));
  });
  return { questions, maps, previews, notes };
}

function questionNotes(q: QuestionSetQuestion, labels: string[]): string[] {
  const notes: string[] = [];
  // handup has no optional questions: every question must be answered before Submit.
  if (!q.required) notes.push(`question "${q.id}" is optional upstream but must be answered here`);
  if (q.textValidation) {
    notes.push(`question "${q.id}" has text validation PaperClip checks on resolve: ${JSON.stringify(q.textValidation)}`);
  }
  if (q.helpText && withHelp(q.prompt, q.helpText) === q.prompt) {
    notes.push(`question "${q.id}": helpText left out (over ${MAX_QUESTION_BYTES} bytes)`);
  }
  if (labels.some((l, i) => l !== q.options?.[i]?.label)) notes.push(`question "${q.id}": duplicate option labels suffixed with their ids`);
  return notes;
}

/** handup returns labels, so they must be unique per question; PaperClip only needs unique ids. */
function distinctLabels(options: ReadonlyArray<{ id: string; label: string }>): string[] {
  const counts = new Map<string, number>();
  for (const o of options) counts.set(o.label, (counts.get(o.label) ?? 0) + 1);
  return options.map((o) => ((counts.get(o.label) ?? 0) > 1 ? `${o.label} (${o.id})` : o.label));
}

function withHelp(prompt: string, help: string | null | undefined): string {
  if (!help?.trim()) return prompt;
  const joined = `${prompt}\n\n${help}`;
  return Buffer.byteLength(joined, 'utf8') <= MAX_QUESTION_BYTES ? joined : prompt;
}

// v1 choice keys are free strings; these words make a key an approval (formats.md §2).
const ALLOW_WORDS = new Set([
  'allow', 'allowed', 'approve', 'approved', 'accept', 'accepted', 'yes', 'y', 'ok', 'okay', 'confirm', 'continue', 'proceed', 'grant',
  'always', 'run',
]);
const NEGATIONS = new Set([
  'no', 'not', 'don', 'dont', 'never', 'deny', 'denied', 'reject', 'decline', 'disallow', 'cancel', 'abort', 'stop', 'block',
]);

function outcomeOfKey(key: string): Option['outcome'] {
  const words = key.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/);
  return words.some((w) => ALLOW_WORDS.has(w)) && !words.some((w) => NEGATIONS.has(w)) ? 'approve' : 'deny';
}

function legacy(r: z.infer<typeof V1Schema>, env: Envelope): Omit<Built, 'nativeKey'> {
  const choices = r.choices ?? [];
  const { title, summary } = heading(r.prompt, r.type === 'input' ? 'Answer the agent' : 'Grant a permission');
  const base = { title, summary, source: source(undefined, env), previews: detailPreviews(r.details ?? {}) };
  if (r.type === 'permission') {
    const keyed = choices.length > 0 ? choices : [{ key: 'allow', label: 'Allow' }, { key: 'deny', label: 'Deny' }];
    return {
      request: {
        ...base,
        kind: text(r.details?.command) ? 'command' : 'custom',
        options: keyed.map((c) => {
          const outcome = outcomeOfKey(c.key);
          return { id: c.key, label: c.label, outcome, style: outcome === 'approve' ? 'primary' : 'danger' };
        }),
      },
      context: { reply: 'legacy', requestId: r.requestId, type: 'permission', keys: keyed.map((c) => [c.label, c.key]) },
    };
  }
  const labels = distinctLabels(choices.map((c) => ({ id: c.key, label: c.label })));
  return {
    request: {
      ...base,
      kind: 'question',
      options: [
        { id: 'submit', label: 'Submit', outcome: 'approve', style: 'primary' },
        { id: 'decline', label: 'Decline', outcome: 'deny', style: 'danger' },
      ],
      input: { questions: [{ id: 'response', question: r.prompt, options: labels.map((label) => ({ label })), allow_free_text: true }] },
    },
    context: { reply: 'legacy', requestId: r.requestId, type: 'input', keys: choices.map((c, i) => [labels[i]!, c.key]) },
    notes: ['v1 input has no refusal reply: a decline sends nothing and the runtime expires the request on its own'],
  };
}

function driver(r: DriverRequest, env: Envelope): Omit<Built, 'nativeKey'> {
  const turnId = r.turnId ?? env.turnId;
  const fields = r.details?.fields ?? [];
  if (r.requestKind === 'user_input' || r.requestKind === 'elicitation') {
    if (r.input) return questionSetRequest(r.prompt, r.input, r, env, turnId, r.requestKind);
    if (fields.length > 0) return fieldForm(r, env, fields, turnId);
    if (r.requestKind === 'user_input') {
      throw new AppError(
        'invalid_frame',
        'payload.request: a user_input request needs input (a paperclip.question_set.v1) or details.fields to ask anything',
      );
    }
  }
  // An elicitation without a form is a plain accept/decline; the harness refuses accept_for_session for it.
  const allowed: Action[] = r.requestKind === 'elicitation' ? ['accept', 'decline', 'cancel'] : [...ACTIONS];
  const labels = r.requestKind === 'elicitation' ? ELICITATION_LABELS : DEFAULT_LABELS;
  const offered =
    r.choices ??
    (r.actions ?? allowed).filter((a): a is Action => allowed.includes(a as Action)).map((key) => ({ key, label: labels[key] }));
  if (offered.length === 0) throw new AppError('invalid_frame', 'payload.request.actions: no action a reviewer could take');
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
): Omit<Built, 'nativeKey'> {
  if (fields.length > MAX_QUESTIONS) {
    throw new AppError(
      'invalid_frame',
      `details.fields: countersign accepts at most ${MAX_QUESTIONS} fields (one question each) per request; this frame has ${fields.length}`,
    );
  }
  const { title, summary } = heading(r.prompt, 'Answer the agent');
  return {
    request: {
      title,
      summary,
      kind: 'question',
      source: source(r.origin, env),
      options: [
        { id: 'submit', label: 'Submit', outcome: 'approve', style: 'primary' },
        { id: 'decline', label: 'Decline', outcome: 'deny', style: 'danger' },
        { id: 'cancel', label: 'Decline and stop the turn', outcome: 'deny', style: null },
      ],
      input: { questions: fields.map((f) => ({ id: f.name, question: f.label ?? f.name, allow_free_text: true })) },
    },
    context: {
      reply: 'runtime',
      requestId: r.requestId,
      turnId,
      form: { type: r.requestKind === 'elicitation' ? 'content' : 'answers' },
      sessionChoice: false,
      cancel: true,
    },
  };
}

function issueThread(r: Interaction, env: Envelope): Omit<Built, 'nativeKey'> {
  const common = { source: source(undefined, env) };
  const header = (prompt: string | undefined, fallback: string, ...more: Array<string | undefined>) =>
    heading(r.title ?? prompt, fallback, r.title ? prompt : undefined, r.summary, ...more);
  const markdownPreview = (title: string, md: string | null | undefined): Preview[] =>
    md?.trim() ? [{ type: 'markdown', title, inline: md }] : [];
  const reasonAllowed = (p: { rejectRequiresReason?: boolean | undefined; allowDeclineReason?: boolean | undefined }) =>
    p.rejectRequiresReason === true || p.allowDeclineReason !== false;
  const confirmOptions = (p: { acceptLabel?: string | null | undefined; rejectLabel?: string | null | undefined }): Option[] => [
    { id: 'accept', label: p.acceptLabel ?? 'Accept', outcome: 'approve', style: 'primary' },
    { id: 'reject', label: p.rejectLabel ?? 'Reject', outcome: 'deny', style: 'danger' },
  ];

  switch (r.kind) {
    case 'request_confirmation': {
      const p = r.payload;
      const action = p.toolAction;
      const request: CreateRequestBody = {
        ...common,
        ...header(p.prompt, 'Confirm'),
        kind: action ? 'command' : 'review',
        previews: [
          ...markdownPreview('Details', p.detailsMarkdown),
          ...(action ? markdownPreview(action.toolDisplayName ?? action.toolName, action.previewMarkdown) : []),
          ...(action?.argumentsSummaryJson ? [{ type: 'json' as const, title: 'Arguments', inline: action.argumentsSummaryJson }] : []),
        ],
        options: confirmOptions(p),
        input: p.rejectRequiresReason ? { feedback: 'required_on_deny' } : null,
      };
      if (action) {
        request.tool = action.toolName;
        request.risk = action.risk === 'destructive' ? 'high' : 'medium';
      }
      return {
        request,
        context: { reply: 'interaction', requestId: r.requestId, kind: r.kind, reason: reasonAllowed(p) },
      };
    }
    case 'request_checkbox_confirmation': {
      const p = r.payload;
      if (p.options.length > MAX_FIELDS) {
        throw new AppError(
          'invalid_frame',
          `payload.options: countersign accepts at most ${MAX_FIELDS} checkbox options (input.fields); this frame has ${p.options.length}`,
        );
      }
      const defaults = p.defaultSelectedOptionIds ?? [];
      return {
        request: {
          ...common,
          ...header(p.prompt, 'Confirm', selectionBounds(p.minSelected, p.maxSelected)),
          kind: 'review',
          previews: markdownPreview('Details', p.detailsMarkdown),
          options: confirmOptions(p),
          // handup has no multi-select field: one checkbox per option; an unedited approval keeps the defaults.
          input: {
            ...(p.rejectRequiresReason ? { feedback: 'required_on_deny' } : {}),
            fields: p.options.map((o) => ({
              name: o.id,
              type: 'boolean',
              label: o.label,
              ...(o.description ? { description: o.description } : {}),
              default: defaults.includes(o.id),
            })),
          },
        },
        context: {
          reply: 'interaction',
          requestId: r.requestId,
          kind: r.kind,
          reason: reasonAllowed(p),
          options: p.options.map((o) => o.id),
          defaults,
        },
      };
    }
    case 'request_item_verdicts': {
      const p = r.payload;
      if (p.items.length > MAX_QUESTIONS) {
        throw new AppError(
          'invalid_frame',
          `payload.items: countersign accepts at most ${MAX_QUESTIONS} items (one question each) per request; this frame has ${p.items.length}`,
        );
      }
      const verdicts = p.verdicts ?? ['approve', 'reject'];
      const needReason = p.requireReasonOn ?? ['reject'];
      const labelled = verdicts.map((v): [string, Verdict] => [VERDICT_LABELS[v], v]);
      const reasonHint =
        needReason.length > 0 ? `\n\nGive a reason (free text) with ${needReason.map((v) => VERDICT_LABELS[v]).join(' or ')}.` : '';
      return {
        request: {
          ...common,
          ...header(p.prompt, 'Review items'),
          kind: 'question',
          previews: [
            ...markdownPreview('Details', p.detailsMarkdown),
            ...p.items.flatMap((item) => markdownPreview(item.label, item.previewMarkdown)),
          ],
          options: [
            { id: 'submit', label: 'Submit verdicts', outcome: 'approve', style: 'primary' },
            { id: 'decline', label: 'Decline', outcome: 'deny', style: 'danger' },
          ],
          input: {
            questions: p.items.map((item) => ({
              id: item.id,
              question: `${item.label}${item.description ? `\n\n${item.description}` : ''}${reasonHint}`,
              options: labelled.map(([label]) => ({ label })),
              allow_free_text: true,
            })),
          },
        },
        context: {
          reply: 'interaction',
          requestId: r.requestId,
          kind: r.kind,
          items: p.items.map((item) => ({ id: item.id, verdicts: labelled })),
        },
      };
    }
    case 'ask_user_questions': {
      const p = r.payload;
      const maps: QuestionMap[] = [];
      const questions: Question[] = p.questions.map((q) => {
        const labels = distinctLabels(q.options);
        const freeText = q.options.find((o) => o.freeText)?.id ?? null;
        maps.push({
          id: q.id,
          mode: q.selectionMode,
          custom: freeText !== null,
          freeTextOption: freeText,
          options: q.options.map((o, i) => [labels[i]!, o.id]),
        });
        return {
          id: q.id,
          question: withHelp(q.prompt, q.helpText),
          options: q.options.map((o, i) => ({ label: labels[i]!, ...(o.description ? { description: o.description } : {}) })),
          multi: q.selectionMode === 'multi',
          allow_free_text: freeText !== null,
        };
      });
      const optional = p.questions.filter((q) => q.required === false).map((q) => q.id);
      return {
        request: {
          ...common,
          ...heading(p.title ?? r.title ?? p.questions[0]?.prompt, 'Answer the agent', undefined, r.summary),
          kind: 'question',
          options: [
            { id: 'submit', label: p.submitLabel?.trim() || 'Submit', outcome: 'approve', style: 'primary' },
            { id: 'decline', label: 'Decline', outcome: 'deny', style: 'danger' },
          ],
          input: { questions },
        },
        context: { reply: 'interaction', requestId: r.requestId, kind: r.kind, questions: maps },
        notes: optional.map((id) => `question "${id}" is optional upstream but must be answered here`),
      };
    }
    case 'suggest_tasks': {
      const p = r.payload;
      const described = (t: (typeof p.tasks)[number]) => (t.description?.trim() ? `\n\n  ${t.description.trim().replace(/\n/g, '\n  ')}` : '');
      const list = p.tasks.map((t) => `- **${t.title}**${described(t)}`).join('\n');
      const count = `${p.tasks.length} suggested task${p.tasks.length === 1 ? '' : 's'}`;
      return {
        request: {
          ...common,
          ...header(undefined, `Create ${count}?`),
          kind: 'review',
          previews: [{ type: 'markdown', title: 'Suggested tasks', inline: list }],
          options: confirmOptions({}),
          // One checkbox per task, all ticked: an unedited approval creates every task.
          input: { fields: p.tasks.map((t) => ({ name: t.clientKey, type: 'boolean', label: t.title, default: true })) },
        },
        context: { reply: 'interaction', requestId: r.requestId, kind: r.kind, keys: p.tasks.map((t) => t.clientKey) },
      };
    }
  }
}

const VERDICT_LABELS: Record<Verdict, string> = { approve: 'Approve', reject: 'Reject', defer: 'Defer' };

function selectionBounds(min: number | undefined, max: number | null | undefined): string | undefined {
  if (min && max != null) return `Select ${min} to ${max} options.`;
  if (min) return `Select at least ${min} option${min === 1 ? '' : 's'}.`;
  if (max != null) return `Select at most ${max} option${max === 1 ? '' : 's'}.`;
  return undefined;
}

function source(origin: Origin | undefined, env: Envelope): CreateRequestBody['source'] {
  return { agent: origin?.provider ?? origin?.adapter ?? null, session: env.session };
}

/** Title = the text or its first line when short enough, else the fallback; the full text goes in the summary. */
function heading(main: string | null | undefined, fallback: string, ...more: Array<string | null | undefined>) {
  const full = main?.trim() ?? '';
  const title = asTitle(full) ?? asTitle(full.split('\n').find((l) => l.trim().length > 0)) ?? fallback;
  const parts = [full && full !== title ? full : null, ...more].filter((s): s is string => typeof s === 'string' && s.trim().length > 0);
  return { title, summary: parts.length > 0 ? parts.join('\n\n') : null };
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim().length > 0 ? v : undefined;
}

// ---- handup decision → native reply ----

type Answers = Record<string, { selected?: string[]; text?: string | null }>;

function renderReply(record: HandupRequest, ctx: PaperclipContext, env: ReplyEnv): unknown {
  switch (ctx.reply) {
    case 'runtime': {
      const resolution = runtimeResolution(record, ctx);
      if (!resolution) return null;
      return {
        schema: 'paperclip.prp.command.v1',
        commandId: env.ulid(),
        controllerSeq: 1,
        type: 'request.resolve',
        issuedAt: new Date(env.now).toISOString(),
        payload: { requestId: ctx.requestId, ...(ctx.turnId ? { turnId: ctx.turnId } : {}), resolution },
      };
    }
    case 'legacy':
      return legacyReply(record, ctx);
    case 'interaction':
      return interactionReply(record, ctx);
  }
}

function runtimeResolution(record: HandupRequest, ctx: Extract<PaperclipContext, { reply: 'runtime' }>): Record<string, unknown> | null {
  const d = record.decision;
  // Cancelled here, or expired with on_timeout "expire": PRP's own way to abandon a request is `cancel`.
  if (!d) return ctx.cancel ? { action: 'cancel' } : null;
  if (d.outcome === 'approve' && ctx.form.type !== 'none') return submission(ctx.form, (d.fields?.answers ?? {}) as Answers);
  if (d.outcome === 'approve' && d.scope === 'session' && ctx.sessionChoice) return { action: 'accept_for_session' };
  return { action: d.option };
}

function submission(form: Exclude<RuntimeForm, { type: 'none' }>, answers: Answers): Record<string, unknown> {
  if (form.type === 'answers') {
    const out: Record<string, { answers: string[] }> = {};
    for (const [id, a] of Object.entries(answers)) if (a.text?.trim()) out[id] = { answers: [a.text] };
    return { action: 'submit', answers: out };
  }
  if (form.type === 'content') {
    const out: Record<string, string> = {};
    for (const [id, a] of Object.entries(answers)) if (a.text?.trim()) out[id] = a.text;
    return { action: 'submit', content: out };
  }
  const out: Record<string, { selectedOptionIds?: string[]; text?: string; customText?: string }> = {};
  for (const q of form.questions) {
    const a = answers[q.id];
    if (!a) continue;
    const typed = a.text?.trim() ? a.text : null;
    if (q.mode === 'text') {
      if (typed) out[q.id] = { text: typed };
      continue;
    }
    const ids = optionIds(q, a.selected);
    const answer: { selectedOptionIds?: string[]; customText?: string } = {};
    if (ids.length > 0) answer.selectedOptionIds = ids;
    // PaperClip refuses a single-select answer with both a selection and custom text: the selection wins.
    if (typed && q.custom && !(q.mode === 'single' && ids.length > 0)) answer.customText = typed;
    if (answer.selectedOptionIds || answer.customText) out[q.id] = answer;
  }
  return { action: 'submit', response: { schema: 'paperclip.question_response.v1', answers: out } };
}

function optionIds(q: QuestionMap, labels: string[] | undefined): string[] {
  const byLabel = new Map(q.options);
  return (labels ?? []).flatMap((label) => {
    const id = byLabel.get(label);
    return id === undefined ? [] : [id];
  });
}

function legacyReply(record: HandupRequest, ctx: Extract<PaperclipContext, { reply: 'legacy' }>): unknown {
  const d = record.decision;
  if (!d) return null;
  if (ctx.type === 'permission') return { requestId: ctx.requestId, response: { decision: d.option } };
  if (d.outcome !== 'approve') return null;
  const a = d.fields?.answers?.response;
  // A typed answer is what the runtime asked for; a picked choice answers with its key.
  const answer = a?.text?.trim() ? a.text : new Map(ctx.keys).get(a?.selected?.[0] ?? '');
  return answer === undefined ? null : { requestId: ctx.requestId, response: { text: answer } };
}

function interactionReply(record: HandupRequest, ctx: Extract<PaperclipContext, { reply: 'interaction' }>): unknown {
  const d = record.decision;
  // Cancel and expiry have no reply of their own: withdrawing is the creator's move, not the reviewer's.
  if (!d) return null;
  const reply = (action: string, body: Record<string, unknown>) => ({ requestId: ctx.requestId, kind: ctx.kind, action, body });
  if (d.outcome === 'deny') {
    const allowed = !('reason' in ctx) || ctx.reason;
    const reason = allowed && d.feedback?.trim() ? [...d.feedback.trim()].slice(0, MAX_REASON_CHARS).join('') : null;
    return reply('reject', reason ? { reason } : {});
  }
  const answers = (d.fields?.answers ?? {}) as Answers;
  switch (ctx.kind) {
    case 'request_confirmation':
      return reply('accept', {});
    case 'request_checkbox_confirmation':
      return reply('accept', { selectedOptionIds: ctx.options.filter((id) => ticked(d.fields?.[id], ctx.defaults.includes(id))) });
    case 'suggest_tasks': {
      const keys = ctx.keys.filter((k) => ticked(d.fields?.[k], true));
      // Accepting with no keys would create every task: unticking all of them is a rejection.
      return keys.length > 0 ? reply('accept', { selectedClientKeys: keys }) : reply('reject', {});
    }
    case 'ask_user_questions':
      return reply('respond', { answers: ctx.questions.flatMap((q) => questionAnswer(q, answers[q.id])) });
    case 'request_item_verdicts':
      return reply('verdicts', {
        verdicts: ctx.items.flatMap((item) => {
          const a = answers[item.id];
          const verdict = new Map(item.verdicts).get(a?.selected?.[0] ?? '');
          if (!verdict) return [];
          return [{ id: item.id, verdict, ...(a?.text?.trim() ? { reason: a.text.trim() } : {}) }];
        }),
      });
  }
}

function questionAnswer(q: QuestionMap, a: Answers[string] | undefined) {
  if (!a) return [];
  const ids = optionIds(q, a.selected);
  const typed = a.text?.trim() ? a.text.trim() : null;
  if (!typed || !q.freeTextOption) return ids.length > 0 ? [{ questionId: q.id, optionIds: ids }] : [];
  // Typed text answers through the question's free-text option, which PaperClip expects selected.
  if (q.mode === 'single' && ids.length > 0 && !ids.includes(q.freeTextOption)) return [{ questionId: q.id, optionIds: ids }];
  return [{ questionId: q.id, optionIds: ids.includes(q.freeTextOption) ? ids : [...ids, q.freeTextOption], otherText: typed }];
}

function ticked(value: unknown, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  return value === true || value === 'true';
}

// ---- Follow-ups ----

function followUp(frame: PaperclipFollowUp): FollowUp {
  if (!TERMINAL_EVENTS.includes(frame.eventType)) {
    return { kind: 'ignored', reason: `eventType "${frame.eventType}" does not settle a runtime request` };
  }
  const requestId = frame.payload.requestId!;
  // Events always name the run; the request may have come bare, without it (key `paperclip:-:…`).
  const key = { nativeKey: keyOf(frame.runId, requestId), fallbackKeys: [keyOf(null, requestId)] };
  if (frame.eventType === 'runtime_request.cancelled') return { kind: 'resolve', ...key, status: 'cancelled' };
  if (frame.eventType === 'runtime_request.expired') return { kind: 'resolve', ...key, status: 'expired' };
  const action = frame.payload.action;
  if (!action) return { kind: 'ignored', reason: 'runtime_request.resolved without an action does not say how it was settled' };
  if (action === 'submit') return { kind: 'resolve', ...key, status: 'answered', option: 'submit' };
  return { kind: 'resolve', ...key, status: outcomeOfKey(action) === 'approve' ? 'approved' : 'denied', option: action };
}

export const paperclipAdapter = {
  format: 'paperclip',
  frameSchema: FrameSchema,
  followUpSchema: FollowUpSchema,
  normalize,
  renderReply,
  followUp,
} satisfies WireAdapter<PaperclipFrame, PaperclipContext, PaperclipFollowUp>;

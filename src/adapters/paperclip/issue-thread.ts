import { z } from 'zod';
import { AppError } from '../../lib/errors.js';
import { MAX_INPUT_FIELDS, MAX_QUESTIONS, type CreateRequestBody, type HandupRequest, type Option, type Question } from '../../requests/request-schema.js';
import { distinctLabels, recordIdOf, safeIds, submitOptions, withNativeIds, type NativeIds } from '../adapter-kit.js';
import {
  INTERACTION,
  flag,
  heading,
  hiddenDetails,
  requestId,
  source,
  unansweredByTimeout,
  unique,
  type Answers,
  type Built,
  type Envelope,
  type Preview,
} from './common.js';
import { optionIds, withHelp, type QuestionMap } from './question-set.js';
import { redactCredentials } from './redact-credentials.js';

/**
 * Issue-thread interactions (`paperclip.interaction_request.v1`): the create schemas of
 * PaperClip's interaction routes, answered with the body those routes take.
 */

/** PaperClip's interaction routes take a reason, and a question's otherText, of at most 4000 characters. */
const MAX_REASON_CHARS = 4000;

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
      .array(z.looseObject({ id: z.string().min(1).max(120), label: z.string().min(1).max(120), description: z.string().max(500).nullable().optional() }))
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
    // Bounds no selection can meet would leave the reviewer only reject: refused here instead.
    const min = p.minSelected ?? 0;
    if (min > p.options.length) flag(ctx, ['minSelected'], `must be at most the number of options (${p.options.length})`);
    else if (p.maxSelected != null && min > p.maxSelected) flag(ctx, ['minSelected'], `must be at most maxSelected (${p.maxSelected})`);
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

export const InteractionSchema = z.discriminatedUnion('kind', [
  interaction('request_confirmation', ConfirmationPayload),
  interaction('request_checkbox_confirmation', CheckboxPayload),
  interaction('request_item_verdicts', VerdictsPayload),
  interaction('ask_user_questions', AskQuestionsPayload),
  interaction('suggest_tasks', SuggestTasksPayload),
]);
export type Interaction = z.infer<typeof InteractionSchema>;

export type InteractionContext =
  | {
      reply: 'interaction';
      requestId: string;
      kind: 'request_confirmation';
      reason: boolean;
      /** A digest of the tool action's arguments as sent, where the preview shows some redacted (hiddenDetails). */
      hidden?: string;
    }
  | {
      reply: 'interaction';
      requestId: string;
      kind: 'request_checkbox_confirmation';
      reason: boolean;
      options: string[];
      defaults: string[];
      /** PaperClip's bounds on how many may be ticked (absent in contexts stored before they were kept). */
      min?: number;
      max?: number | null;
    }
  | {
      reply: 'interaction';
      requestId: string;
      kind: 'request_item_verdicts';
      items: Array<{ id: string; verdicts: Array<[label: string, verdict: Verdict]> }>;
      /** `requireReasonOn`: verdicts PaperClip takes only with a reason (absent in contexts stored before it was kept). */
      reasonOn?: Verdict[];
      /** The native item ids the record's question ids stand for, where they differ (absent: the same). */
      nativeIds?: NativeIds;
    }
  | {
      reply: 'interaction';
      requestId: string;
      kind: 'ask_user_questions';
      questions: QuestionMap[];
      /** The native question ids the record's stand for, where they differ (absent: the same). */
      nativeIds?: NativeIds;
    }
  | { reply: 'interaction'; requestId: string; kind: 'suggest_tasks'; keys: string[] };

export function issueThreadRequest(r: Interaction, env: Envelope): Built<InteractionContext> {
  const common = { source: source(undefined, env) };
  const header = (prompt: string | undefined, fallback: string, ...more: Array<string | undefined>) =>
    heading(r.title ?? prompt, fallback, r.title ? prompt : undefined, r.summary, ...more);
  const markdownPreview = (title: string, md: string | null | undefined): Preview[] => (md?.trim() ? [{ type: 'markdown', title, inline: md }] : []);
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
          ...(action?.argumentsSummaryJson ? [{ type: 'json' as const, title: 'Arguments', inline: shownArguments(action.argumentsSummaryJson) }] : []),
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
        context: { reply: 'interaction', requestId: r.requestId, kind: r.kind, reason: reasonAllowed(p), ...hiddenArguments(action?.argumentsSummaryJson) },
      };
    }
    case 'request_checkbox_confirmation': {
      const p = r.payload;
      if (p.options.length > MAX_INPUT_FIELDS) {
        throw new AppError(
          'invalid_frame',
          `payload.options: countersign accepts at most ${MAX_INPUT_FIELDS} checkbox options (input.fields); this frame has ${p.options.length}`,
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
          ...(p.minSelected !== undefined ? { min: p.minSelected } : {}),
          ...(p.maxSelected != null ? { max: p.maxSelected } : {}),
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
      const ids = safeIds(
        p.items.map((item) => item.id),
        'question',
      );
      const reasonHint = needReason.length > 0 ? `\n\nGive a reason (free text) with ${needReason.map((v) => VERDICT_LABELS[v]).join(' or ')}.` : '';
      return {
        request: {
          ...common,
          ...header(p.prompt, 'Review items'),
          kind: 'question',
          previews: [...markdownPreview('Details', p.detailsMarkdown), ...p.items.flatMap((item) => markdownPreview(item.label, item.previewMarkdown))],
          options: submitOptions('Submit verdicts'),
          input: {
            questions: p.items.map((item, i) => ({
              id: ids.ids[i]!,
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
          reasonOn: needReason,
          ...withNativeIds({ questions: ids.map }),
        },
      };
    }
    case 'ask_user_questions': {
      const p = r.payload;
      const maps: QuestionMap[] = [];
      const ids = safeIds(
        p.questions.map((q) => q.id),
        'question',
      );
      const questions: Question[] = p.questions.map((q, i) => {
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
          id: ids.ids[i]!,
          question: withHelp(q.prompt, q.helpText),
          options: q.options.map((o, i) => ({ label: labels[i]!, ...(o.description ? { description: o.description } : {}) })),
          multi: q.selectionMode === 'multi',
          allow_free_text: freeText !== null,
        };
      });
      const optional = p.questions.flatMap((q, i) => (q.required === false ? [ids.ids[i]!] : []));
      return {
        request: {
          ...common,
          ...heading(p.title ?? r.title ?? p.questions[0]?.prompt, 'Answer the agent', undefined, r.summary),
          kind: 'question',
          options: submitOptions(p.submitLabel),
          input: { questions, ...(optional.length ? { optional_questions: optional } : {}) },
        },
        context: { reply: 'interaction', requestId: r.requestId, kind: r.kind, questions: maps, ...withNativeIds({ questions: ids.map }) },
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

/** hiddenDetails of a tool action's arguments summary, read as the JSON it holds. */
function hiddenArguments(summary: string | null | undefined): { hidden?: string } {
  if (!summary) return {};
  try {
    return hiddenDetails(JSON.parse(summary));
  } catch {
    return {};
  }
}

/** A tool action's arguments summary as shown: JSON with credential-like keys is re-serialised redacted. */
function shownArguments(summary: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(summary);
  } catch {
    return summary;
  }
  const redacted = redactCredentials(parsed);
  return JSON.stringify(redacted) === JSON.stringify(parsed) ? summary : JSON.stringify(redacted, null, 2);
}

// ---- handup decision → interaction route body ----

export function interactionReply(record: HandupRequest, ctx: InteractionContext): unknown {
  const d = record.decision;
  // Cancel and expiry have no reply of their own: withdrawing is the creator's move, not the
  // reviewer's. Nor has an `on_timeout: approve` that would send what PaperClip's route refuses
  // (no verdicts, a required question unanswered, too few boxes ticked): the clock answers nothing.
  if (!d || unansweredByTimeout(record)) return null;
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
    case 'request_checkbox_confirmation': {
      const selected = checkedBoxes(d, ctx);
      if (d.decided_by === 'timeout' && outOfBounds(selected.length, ctx)) return null;
      return reply('accept', { selectedOptionIds: selected });
    }
    case 'suggest_tasks': {
      const keys = ctx.keys.filter((k) => ticked(d.fields?.[k], true));
      // Accepting with no keys would create every task: unticking all of them is a rejection.
      return keys.length > 0 ? reply('accept', { selectedClientKeys: keys }) : reply('reject', {});
    }
    case 'ask_user_questions':
      return reply('respond', { answers: ctx.questions.flatMap((q) => questionAnswer(q, answers[recordIdOf(ctx.nativeIds?.questions, q.id)])) });
    case 'request_item_verdicts':
      return reply('verdicts', {
        verdicts: ctx.items.flatMap((item) => {
          const a = answers[recordIdOf(ctx.nativeIds?.questions, item.id)];
          const verdict = new Map(item.verdicts).get(a?.selected?.[0] ?? '');
          if (!verdict) return [];
          return [{ id: item.id, verdict, ...(a?.text?.trim() ? { reason: a.text.trim() } : {}) }];
        }),
      });
  }
}

/**
 * A reviewer's accept that PaperClip's route would refuse, or that would lose what the reviewer
 * wrote, is refused before it is stored: a checkbox confirmation ticking fewer or more boxes
 * than the frame allows; item verdicts where an item has a reason but no verdict (the route
 * takes reasons only with a verdict), a verdict the frame's `requireReasonOn` wants a reason
 * for given without one, or no verdict at all (the route takes one to 200).
 */
export function checkInteractionDecision(record: HandupRequest, ctx: InteractionContext): void {
  const d = record.decision;
  if (d?.outcome !== 'approve') return;
  if (ctx.kind === 'request_checkbox_confirmation') {
    const count = checkedBoxes(d, ctx).length;
    if (outOfBounds(count, ctx)) {
      throw new AppError('invalid_decision', `fields: ${selectionBounds(ctx.min, ctx.max)} (${count} ticked)`);
    }
  } else if (ctx.kind === 'ask_user_questions') {
    const answers = (d.fields?.answers ?? {}) as Answers;
    for (const q of ctx.questions) {
      const id = recordIdOf(ctx.nativeIds?.questions, q.id);
      const a = Object.hasOwn(answers, id) ? answers[id] : undefined;
      const typed = a?.text?.trim();
      if (!typed || !q.freeTextOption) continue;
      const ids = optionIds(q, a!.selected);
      // Typed text travels as the free-text option's otherText: beside another option of a
      // single-select question it would be dropped.
      if (q.mode === 'single' && ids.length > 0 && !ids.includes(q.freeTextOption)) {
        throw new AppError('invalid_decision', `fields.answers.${id}: this question takes one option or typed text, not both`);
      }
      if ([...typed].length > MAX_REASON_CHARS) {
        throw new AppError('invalid_decision', `fields.answers.${id}.text: PaperClip takes at most ${MAX_REASON_CHARS} characters of typed text`);
      }
    }
  } else if (ctx.kind === 'request_item_verdicts') {
    const answers = (d.fields?.answers ?? {}) as Answers;
    let given = 0;
    for (const item of ctx.items) {
      const id = recordIdOf(ctx.nativeIds?.questions, item.id);
      const a = answers[id];
      const labels = new Map(item.verdicts);
      const verdict = labels.get(a?.selected?.[0] ?? '');
      const reason = a?.text?.trim();
      const choose = [...labels.keys()].join(', ');
      if (!verdict) {
        if (reason) throw new AppError('invalid_decision', `fields.answers.${id}: a reason goes with a verdict: choose one of ${choose}`);
        continue;
      }
      given++;
      if (!reason && ctx.reasonOn?.includes(verdict)) {
        throw new AppError('invalid_decision', `fields.answers.${id}.text: ${VERDICT_LABELS[verdict]} needs a reason`);
      }
    }
    if (given === 0) throw new AppError('invalid_decision', `fields.answers: give at least one item a verdict`);
  }
}

type CheckboxContext = Extract<InteractionContext, { kind: 'request_checkbox_confirmation' }>;

const checkedBoxes = (d: NonNullable<HandupRequest['decision']>, ctx: CheckboxContext) =>
  ctx.options.filter((id) => ticked(d.fields?.[id], ctx.defaults.includes(id)));

const outOfBounds = (count: number, ctx: CheckboxContext) => count < (ctx.min ?? 0) || (ctx.max != null && count > ctx.max);

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

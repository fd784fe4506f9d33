import { z } from 'zod';
import { AppError } from '../../lib/errors.js';
import { MAX_QUESTION_OPTIONS, MAX_QUESTIONS, type HandupRequest, type Question } from '../../requests/request-schema.js';
import type { FollowUp, FollowUpTarget, Normalized, ReplyEnv } from '../adapter.js';
import { asTitle, toolTitle, distinctLabels, recordIdOf, safeIds, submitOptions, toolKind, withNativeIds, type IdMap, type NativeIds } from '../adapter-kit.js';
import { APPROVE_DENY, nativeKey, relayRequest, sequence, uuid } from './common.js';

/**
 * Relay 1.1/1.2 interactions (docs/formats/roll.md): `interaction.request` frames asking
 * for an approval (`approval.request`) or user input (`userInput.request`, a form of controls),
 * answered with `interaction.candidate`; `interaction.resolved` / `interaction.cancelled` settle
 * them and, by design, say nothing of the result.
 */

// ---- Frames, in Roll's own field names (the index modules of upstream's relay-protocol and protocol packages) ----

const timestamp = z.iso.datetime({ offset: true });
const identifier = z
  .string()
  .min(1)
  .max(64)
  .refine((s) => s.trim().length > 0, 'must not be blank');
const label = z
  .string()
  .min(1)
  .max(200)
  .refine((s) => s.trim().length > 0, 'must not be blank');
const description = z.string().min(1).max(500);
const length = z.number().int().min(0).max(10000);
const count = z.number().int().min(0).max(50);

/** Upstream's USER_INPUT_TEXT_MAX_CHARS: the longest text value a control takes. */
const TEXT_MAX = 10000;
/** Upstream's USER_INPUT_CANCEL_REASON_MAX_CHARS. */
const CANCEL_REASON_MAX = 500;

const base = { id: identifier, label, description: description.optional(), required: z.boolean() };
const flag = (ctx: z.RefinementCtx, field: string, message: string) => ctx.addIssue({ code: 'custom', path: [field], message });

// The Runtime's own form schema refuses bounds no answer can meet; so does this, naming the field
// as it does, rather than show a reviewer a form only a decline can end.
const TextControl = z
  .strictObject({ type: z.enum(['text', 'multiline']), ...base, minLength: length.optional(), maxLength: length.optional() })
  .superRefine((c, ctx) => {
    if (Math.max(c.minLength ?? 0, c.required ? 1 : 0) > (c.maxLength ?? TEXT_MAX)) flag(ctx, 'maxLength', 'effective minLength must not exceed maxLength');
  });
const NumberControl = z
  .strictObject({
    type: z.literal('number'),
    ...base,
    min: z.number().optional(),
    max: z.number().optional(),
    integer: z.boolean().optional(),
  })
  .superRefine((c, ctx) => {
    if (c.min !== undefined && c.max !== undefined && c.min > c.max) flag(ctx, 'min', 'min must not exceed max');
    if (c.integer === true && Math.ceil(c.min ?? -Infinity) > Math.floor(c.max ?? Infinity)) {
      flag(ctx, 'integer', 'integer bounds must include at least one integer');
    }
  });
const BooleanControl = z.strictObject({ type: z.literal('boolean'), ...base });
const ChoiceControl = z
  .strictObject({
    type: z.literal('choice'),
    ...base,
    multiple: z.boolean(),
    options: z
      .array(z.strictObject({ id: identifier, label, description: description.optional() }))
      .min(1)
      .max(50),
    minSelections: count.optional(),
    maxSelections: count.min(1).optional(),
  })
  .superRefine((c, ctx) => {
    const maximum = c.maxSelections ?? (c.multiple ? c.options.length : 1);
    if (c.minSelections !== undefined && c.minSelections > maximum) flag(ctx, 'minSelections', 'minSelections must not exceed maxSelections');
    if (maximum > c.options.length) flag(ctx, 'maxSelections', 'maxSelections must not exceed the option count');
    if (!c.multiple && ((c.minSelections ?? 0) > 1 || maximum > 1)) {
      flag(ctx, (c.minSelections ?? 0) > 1 ? 'minSelections' : 'maxSelections', 'single-choice controls allow at most one selection');
    }
  });
const Control = z.discriminatedUnion('type', [TextControl, NumberControl, BooleanControl, ChoiceControl]);
type Control = z.infer<typeof Control>;

const UserInputForm = z
  .strictObject({ title: label.optional(), description: description.optional(), controls: z.array(Control).min(1).max(16) })
  .superRefine((form, ctx) => {
    const ids = new Set<string>();
    form.controls.forEach((c, i) => {
      if (ids.has(c.id)) ctx.addIssue({ code: 'custom', path: ['controls', i, 'id'], message: `control id "${c.id}" appears more than once` });
      ids.add(c.id);
      if (c.type === 'choice' && new Set(c.options.map((o) => o.id)).size !== c.options.length) {
        ctx.addIssue({ code: 'custom', path: ['controls', i, 'options'], message: 'choice option ids must be unique' });
      }
    });
  });

const ApprovalProjection = z.strictObject({
  approvalId: uuid,
  agentName: z.string().min(1),
  toolName: z.string().min(1),
  explanation: z.string().trim().min(1).max(100).optional(),
});

const requestBase = {
  type: z.literal('interaction.request'),
  workspaceId: uuid,
  relaySequence: sequence,
  interactionId: uuid,
  threadId: uuid,
  turnId: uuid,
  expiresAt: timestamp,
  sensitivity: z.literal('normal'),
};

export const InteractionRequestFrame = z.discriminatedUnion('method', [
  z.strictObject({ ...requestBase, method: z.literal('approval.request'), projection: ApprovalProjection }),
  z.strictObject({ ...requestBase, method: z.literal('userInput.request'), projection: UserInputForm }),
]);
type InteractionRequestFrame = z.infer<typeof InteractionRequestFrame>;

const terminal = <T extends string>(type: T) =>
  z.strictObject({
    type: z.literal(type),
    workspaceId: uuid,
    relaySequence: sequence,
    interactionId: uuid,
    threadId: uuid,
    turnId: uuid,
    method: z.enum(['approval.request', 'userInput.request']),
  });
export const InteractionResolvedFrame = terminal('interaction.resolved');
export const InteractionCancelledFrame = terminal('interaction.cancelled');
type InteractionTerminalFrame = z.infer<typeof InteractionResolvedFrame> | z.infer<typeof InteractionCancelledFrame>;

// ---- Native context ----

/** A control as the reply and the decision check need it: limits, and option labels back to ids. */
type ControlMap = Control extends infer C
  ? C extends Control
    ? Omit<C, 'label' | 'description' | 'options'> & { options?: Array<[label: string, id: string]> }
    : never
  : never;

export interface InteractionContext {
  interaction: 'approval.request' | 'userInput.request';
  workspaceId: string;
  interactionId: string;
  threadId: string;
  turnId: string;
  /** Unix ms of the frame's `expiresAt`: a cancel after it is an expiry. */
  expiresAt: number;
  controls?: ControlMap[];
  /** The native control ids the record's question ids stand for, where they differ (absent: the same). */
  nativeIds?: NativeIds;
}

// ---- Frame → handup Request ----

const YES_NO: Array<[label: string, value: boolean]> = [
  ['Yes', true],
  ['No', false],
];

/** What the reviewer reads under a control's label: its description and the limits it enforces. */
function hint(c: Control): string | undefined {
  const parts: string[] = [];
  if (c.description) parts.push(c.description);
  if (c.type === 'number') {
    const what = c.integer ? 'A whole number' : 'A number';
    const range =
      c.min !== undefined && c.max !== undefined
        ? ` from ${c.min} to ${c.max}`
        : c.min !== undefined
          ? ` of at least ${c.min}`
          : c.max !== undefined
            ? ` of at most ${c.max}`
            : '';
    parts.push(`${what}${range}.`);
  }
  if (c.type === 'text' || c.type === 'multiline') {
    if (c.minLength) parts.push(`At least ${c.minLength} characters.`);
    if (c.maxLength !== undefined) parts.push(`At most ${c.maxLength} characters.`);
  }
  if (c.type === 'choice' && c.multiple) {
    if (c.minSelections) parts.push(`Choose at least ${c.minSelections}.`);
    if (c.maxSelections !== undefined) parts.push(`Choose at most ${c.maxSelections}.`);
  }
  return parts.length ? parts.join(' ') : undefined;
}

/** A control the runtime lets go unanswered: not required, and no minimum number of choices. */
const isOptional = (c: Control) => !c.required && !(c.type === 'choice' && (c.minSelections ?? 0) > 0);

function controlQuestions(controls: readonly Control[], ids: readonly string[]): { questions: Question[]; maps: ControlMap[] } {
  if (controls.length > MAX_QUESTIONS) {
    throw new AppError(
      'invalid_frame',
      `projection.controls: countersign accepts at most ${MAX_QUESTIONS} controls (one question each) per request; this form has ${controls.length}`,
    );
  }
  const questions: Question[] = [];
  const maps: ControlMap[] = [];
  controls.forEach((c, i) => {
    const more = hint(c);
    const question = more ? `${c.label}\n\n${more}` : c.label;
    const { label: _label, description: _description, ...limits } = c;
    if (c.type === 'choice') {
      if (c.options.length > MAX_QUESTION_OPTIONS) {
        throw new AppError(
          'invalid_frame',
          `projection.controls[${i}].options: countersign accepts at most ${MAX_QUESTION_OPTIONS} options per question; control "${c.id}" has ${c.options.length}`,
        );
      }
      const labels = distinctLabels(c.options);
      questions.push({
        id: ids[i]!,
        question,
        options: c.options.map((o, j) => ({ label: labels[j]!, ...(o.description ? { description: o.description } : {}) })),
        multi: c.multiple,
        allow_free_text: false,
      });
      maps.push({ ...limits, options: c.options.map((o, j) => [labels[j]!, o.id]) } as ControlMap);
    } else if (c.type === 'boolean') {
      questions.push({ id: ids[i]!, question, options: YES_NO.map(([l]) => ({ label: l })), multi: false, allow_free_text: false });
      maps.push(limits as ControlMap);
    } else {
      questions.push({ id: ids[i]!, question, allow_free_text: true });
      maps.push(limits as ControlMap);
    }
  });
  return { questions, maps };
}

export function interactionRequest(frame: InteractionRequestFrame): Normalized<InteractionContext> {
  const key = nativeKey(frame.workspaceId, frame.interactionId);
  const context = {
    interaction: frame.method,
    workspaceId: frame.workspaceId,
    interactionId: frame.interactionId,
    threadId: frame.threadId,
    turnId: frame.turnId,
    expiresAt: Date.parse(frame.expiresAt),
  };
  if (frame.method === 'approval.request') {
    const p = frame.projection;
    return {
      request: {
        title: asTitle(p.explanation) ?? toolTitle(p.agentName, p.toolName),
        tool: p.toolName,
        kind: toolKind(p.toolName),
        source: { agent: p.agentName, session: frame.threadId },
        options: APPROVE_DENY,
        dedupe_key: key,
      },
      nativeKey: key,
      context,
      expiresAt: context.expiresAt,
    };
  }
  const form = frame.projection;
  // Control ids are any text upstream; those a record cannot carry get safe ones.
  const ids = safeIds(
    form.controls.map((c) => c.id),
    'question',
  );
  const { questions, maps } = controlQuestions(form.controls, ids.ids);
  const optional = form.controls.flatMap((c, i) => (isOptional(c) ? [ids.ids[i]!] : []));
  const title = asTitle(form.title);
  const summary = [title ? undefined : form.title, form.description].filter((s): s is string => Boolean(s?.trim())).join('\n\n');
  return {
    request: {
      title: title ?? 'Answer the agent',
      summary: summary || null,
      kind: 'question',
      source: { agent: null, session: frame.threadId },
      options: submitOptions(),
      input: { questions, ...(optional.length ? { optional_questions: optional } : {}) },
      dedupe_key: key,
    },
    nativeKey: key,
    context: { ...context, controls: maps, ...withNativeIds({ questions: ids.map }) },
    expiresAt: context.expiresAt,
  };
}

// ---- Decision check and reply ----

type Answer = { selected?: string[]; text?: string | null };
type Value = string | number | boolean | string[];

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A decimal text (DECIMAL, or a number's own String) as one canonical form of its value: sign, digits, exponent. */
function decimalValue(text: string): string {
  const [, sign, whole = '', fraction = '', exponent = '0'] = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text) ?? [];
  let digits = whole + fraction;
  let point = whole.length + Number(exponent);
  const lead = /^0*/.exec(digits)![0].length;
  digits = digits.slice(lead).replace(/0+$/, '');
  point -= lead;
  return digits === '' ? '0' : `${sign === '-' ? '-' : ''}0.${digits}e${point}`;
}

/** The value a control's answer becomes, or why the runtime would refuse it. */
function valueOf(c: ControlMap, a: Answer): { value: Value } | { problem: string } {
  const selected = a.selected ?? [];
  switch (c.type) {
    case 'choice': {
      const ids = selected.flatMap((l) => (c.options ?? []).filter(([label]) => label === l).map(([, id]) => id));
      if (!c.multiple) return { value: ids[0] ?? '' };
      const min = Math.max(c.minSelections ?? 0, c.required ? 1 : 0);
      const max = c.maxSelections ?? (c.options ?? []).length;
      if (ids.length < min) return { problem: `choose at least ${min}` };
      if (ids.length > max) return { problem: `choose at most ${max}` };
      return { value: ids };
    }
    case 'boolean':
      return { value: YES_NO.find(([l]) => l === selected[0])?.[1] ?? false };
    case 'number': {
      const text = a.text?.trim() ?? '';
      const n = Number(text);
      if (!DECIMAL.test(text) || !Number.isFinite(n)) return { problem: 'must be a number' };
      // The value sent is the nearest double: checked and sent only when it is the number typed
      // (9007199254740993 would arrive as …992, 0.99999999999999999 as 1).
      if (decimalValue(text) !== decimalValue(String(n))) return { problem: `has more digits than the runtime can receive: it would arrive as ${String(n)}` };
      if (c.integer && !Number.isInteger(n)) return { problem: 'must be a whole number' };
      if (c.min !== undefined && n < c.min) return { problem: `must be at least ${c.min}` };
      if (c.max !== undefined && n > c.max) return { problem: `must be at most ${c.max}` };
      return { value: n };
    }
    default: {
      const text = a.text ?? '';
      const min = Math.max(c.minLength ?? 0, c.required ? 1 : 0);
      const max = c.maxLength ?? TEXT_MAX;
      if (text.length < min) return { problem: `must contain at least ${min} characters` };
      if (text.length > max) return { problem: `must contain at most ${max} characters` };
      return { value: text };
    }
  }
}

/**
 * The submitted values in form order (answered controls only), by native control id, or the
 * first refusal, by the record's question id.
 */
function submitted(
  controls: readonly ControlMap[],
  record: HandupRequest,
  questionIds: IdMap | undefined,
): { values: Array<{ id: string; value: Value }> } | { id: string; problem: string } {
  const answers = (record.decision?.fields?.answers ?? {}) as Record<string, Answer>;
  const values: Array<{ id: string; value: Value }> = [];
  for (const c of controls) {
    const a = answers[recordIdOf(questionIds, c.id)];
    if (!a || ((a.selected ?? []).length === 0 && !a.text?.trim())) continue;
    const v = valueOf(c, a);
    if ('problem' in v) return { id: recordIdOf(questionIds, c.id), problem: v.problem };
    values.push({ id: c.id, value: v.value });
  }
  return { values };
}

/** A user-input answer the runtime would refuse is 400 `invalid_decision` naming the control. */
export function checkInteractionDecision(record: HandupRequest, ctx: InteractionContext): void {
  if (ctx.interaction !== 'userInput.request' || record.decision?.outcome !== 'approve') return;
  const result = submitted(ctx.controls ?? [], record, ctx.nativeIds?.questions);
  if ('problem' in result) throw new AppError('invalid_decision', `fields.answers.${result.id}: ${result.problem} (Roll control limits)`);
}

/**
 * `interaction.candidate`: approvals get `{decision, reason?}`; user input `{status: submitted,
 * values}`, or `{status: cancelled, reason?}` when declined, cancelled or expired. An approval
 * candidate has no cancelled form upstream, so an approval that ended undecided gets no reply
 * and the Companion's own `expiresAt` ends it.
 */
export function interactionReply(record: HandupRequest, ctx: InteractionContext, env: ReplyEnv): unknown {
  const d = record.decision;
  const feedback = d?.feedback?.trim() ? d.feedback : undefined;
  let candidate: Record<string, unknown> | null;
  if (ctx.interaction === 'approval.request') {
    candidate = !d?.outcome ? null : d.outcome === 'approve' ? { decision: 'approve' } : { decision: 'reject', ...(feedback ? { reason: feedback } : {}) };
  } else if (d?.outcome === 'approve') {
    const result = submitted(ctx.controls ?? [], record, ctx.nativeIds?.questions);
    const answered = new Set('values' in result ? result.values.map((v) => v.id) : []);
    // Only a timeout with on_timeout "approve" submits without the required answers: nothing to send but a cancel.
    const complete = 'values' in result && (ctx.controls ?? []).every((c) => answered.has(c.id) || !c.required);
    candidate = complete ? { status: 'submitted', values: result.values } : { status: 'cancelled' };
  } else {
    const reason = feedback ? [...feedback].slice(0, CANCEL_REASON_MAX).join('') : undefined;
    candidate = { status: 'cancelled', ...(reason ? { reason } : {}) };
  }
  if (candidate === null) return null;
  return relayRequest(ctx.workspaceId, 'interaction.candidate', env.uuid(), {
    interactionId: ctx.interactionId,
    threadId: ctx.threadId,
    turnId: ctx.turnId,
    method: ctx.interaction,
    candidate,
  });
}

// ---- Follow-ups ----

/**
 * The settlement frames carry no result. A request still pending was not settled by this
 * broker's candidate (that would have ended it), so it ends `cancelled`, or `expired` when
 * the frame (either one) came after the interaction's `expiresAt` (docs/formats/README.md).
 */
export function interactionFollowUp(frame: InteractionTerminalFrame, stored?: FollowUpTarget<InteractionContext>): FollowUp {
  const key = nativeKey(frame.workspaceId, frame.interactionId);
  const expired = stored !== undefined && stored.now >= stored.context.expiresAt;
  if (expired) return { kind: 'resolve', nativeKey: key, status: 'expired' };
  const feedback = frame.type === 'interaction.resolved' ? 'resolved at the Companion; Relay 1.1 does not say how' : undefined;
  return { kind: 'resolve', nativeKey: key, status: 'cancelled', ...(feedback ? { feedback } : {}) };
}

import { z } from 'zod';
import { AppError } from '../lib/errors.js';
import type { Decision, HandupRequest, Kind, Option, Outcome } from '../requests/request-schema.js';
import type { FollowUp, FollowUpTarget, FrameContext, Normalized, ReplyEnv, WireAdapter } from './adapter.js';
import { answerText, asTitle, recordIdOf, safeIds, withNativeIds, type NativeIds } from './adapter-kit.js';

/**
 * ALP (alpd IPC v1): whatever ALP asks the user (an `alp_ask` question, a permission, a
 * confirmation) is one `question` event, answered by text with the `question.answer` request.
 * Which of the two it is shows only in the option labels, which ALP writes in the user's
 * language (English or Vietnamese).
 */

// ---- Frames, in ALP's own field names ----

// ALP publishes no complete schema and adds fields between betas: unknown fields are dropped,
// not refused.
const absent = z.undefined().optional();
const nonBlank = z.string().refine((s) => s.trim().length > 0, { message: 'must not be empty' });

const QuestionEvent = z.object({
  type: z.literal('question'),
  question: z.object({
    id: z.string().min(1),
    sessionId: z.string().min(1),
    rootId: z.string().min(1),
    agent: z.string(),
    body: nonBlank,
    options: z.array(z.string().min(1)).optional(),
    askedAt: z.string(),
  }),
});

const QuestionResolvedEvent = z
  .object({
    type: z.literal('question.resolved'),
    questionId: z.string().min(1),
    outcome: z.enum(['answered', 'dismissed', 'timeout', 'canceled']),
    answer: z.string().optional(),
  })
  .refine((e) => e.outcome !== 'answered' || e.answer !== undefined, {
    message: 'required when outcome is "answered"',
    path: ['answer'],
  });

/** Stands in for every event type this adapter does not read; `name` keeps the real type. */
const OTHER = '*';
const OtherEvent = z.object({ type: z.literal(OTHER), name: z.string() });
// Marks a value mapped to OTHER already (a frame can carry `"type": "*"` itself, never a symbol).
const MAPPED = Symbol('mapped to OTHER');
const other = (name: string) => ({ type: OTHER, name, [MAPPED]: true });
const READ_TYPES = new Set(['question', 'question.resolved']);

/**
 * ALP's event list grows between betas (`attention` and `history.reset` came in beta.4), so an
 * event of any other type is well-formed here: it parses as `{type: "*", name}` and is refused
 * (422) or ignored by name instead of failing as an unknown discriminator.
 */
const openEventTypes = <S extends z.ZodType>(schema: S) =>
  z.preprocess(
    (v) =>
      v !== null &&
      typeof v === 'object' &&
      !(MAPPED in v) &&
      typeof (v as { type?: unknown }).type === 'string' &&
      !READ_TYPES.has((v as { type: string }).type)
        ? other((v as { type: string }).type)
        : v,
    schema,
  );

const AlpEvent = openEventTypes(z.discriminatedUnion('type', [QuestionEvent, QuestionResolvedEvent, OtherEvent]));

// The notification has no `type`, which tells it apart from a bare event.
const EventNotification = z.object({
  type: absent,
  jsonrpc: z.literal('2.0'),
  method: z.literal('event'),
  params: z.object({
    sessionId: z.string(),
    epoch: z.string(),
    seq: z.number().int().min(0),
    ts: z.string(),
    event: AlpEvent,
  }),
});

/**
 * Any other JSON-RPC notification (beta.4 adds `terminal.event`) asks nothing either: it reads as
 * an event of another type, named by its method, so it is refused (422) or ignored like one.
 */
const otherNotifications = <S extends z.ZodType>(schema: S) =>
  z.preprocess((v) => {
    const n = v as { type?: unknown; jsonrpc?: unknown; method?: unknown } | null;
    return n !== null && typeof n === 'object' && n.type === undefined && n.jsonrpc === '2.0' && typeof n.method === 'string' && n.method !== 'event'
      ? other(n.method)
      : v;
  }, schema);

/** A JSON-RPC `event` notification or its bare event; request and follow-up frames alike. */
export const AlpFrameSchema = otherNotifications(
  openEventTypes(z.discriminatedUnion('type', [QuestionEvent, QuestionResolvedEvent, OtherEvent, EventNotification])),
);
export type AlpFrame = z.infer<typeof AlpFrameSchema>;

// ---- ALP's option sets ----

type ChoiceId = 'allow_once' | 'always_allow' | 'deny' | 'approve' | 'reject';
type Lang = 'en' | 'vi';
type ChoiceSet = 'permission' | 'confirmation';

/** ALP's own labels (from its language module), in the two languages it writes. */
const CHOICES: Record<ChoiceId, { outcome: Outcome; style: string | null } & Record<Lang, string>> = {
  allow_once: { outcome: 'approve', style: 'primary', en: 'Allow once', vi: 'Cho phép lần này' },
  always_allow: { outcome: 'approve', style: null, en: 'Always allow', vi: 'Luôn cho phép' },
  deny: { outcome: 'deny', style: 'danger', en: 'Deny', vi: 'Từ chối' },
  approve: { outcome: 'approve', style: 'primary', en: 'Approve', vi: 'Duyệt' },
  reject: { outcome: 'deny', style: 'danger', en: 'Reject', vi: 'Từ chối' },
};

/** Permissions asked by an `ask` rule offer no "Always allow". */
const OPTION_SETS: ReadonlyArray<{ set: ChoiceSet; kind: Kind; ids: readonly ChoiceId[] }> = [
  { set: 'permission', kind: 'command', ids: ['allow_once', 'always_allow', 'deny'] },
  { set: 'permission', kind: 'command', ids: ['allow_once', 'deny'] },
  { set: 'confirmation', kind: 'review', ids: ['approve', 'reject'] },
];

/** Labels compare in NFC (Vietnamese diacritics may arrive decomposed) and without outer spaces. */
const canonical = (label: string) => label.normalize('NFC').trim();

/** Which ALP option set the labels are, and each choice's label exactly as it came over the wire. */
function matchOptionSet(options: readonly string[]): { set: ChoiceSet; kind: Kind; labels: Partial<Record<ChoiceId, string>> } | undefined {
  for (const { set, kind, ids } of OPTION_SETS) {
    if (options.length !== ids.length) continue;
    for (const lang of ['en', 'vi'] as const) {
      const labels: Partial<Record<ChoiceId, string>> = {};
      for (const id of ids) {
        const wire = options.find((o) => canonical(o) === CHOICES[id][lang]);
        if (wire === undefined) break;
        labels[id] = wire;
      }
      if (Object.keys(labels).length === ids.length) return { set, kind, labels };
    }
  }
  return undefined;
}

// ---- Frame → handup Request ----

export interface AlpContext {
  /** The full question id: ALP also takes a unique prefix, which can turn ambiguous later. */
  questionId: string;
  set: ChoiceSet | 'question';
  /** Choice id → its label exactly as ALP sent it, the text that answers with that choice. */
  labels: Partial<Record<ChoiceId, string>>;
  /** A plain question's record id, when the question id is not one a record can carry (absent: the same). */
  nativeIds?: NativeIds;
}

/** The record's id of a plain question's one question. */
const recordQuestionId = (context: AlpContext) => recordIdOf(context.nativeIds?.questions, context.questionId);

const nativeKey = (questionId: string) => `alp:${questionId}`;

const FALLBACK_TITLE: Record<AlpContext['set'], (agent: string) => string> = {
  permission: (agent) => `${agent} asks for permission`,
  confirmation: (agent) => `${agent} asks you to confirm`,
  question: (agent) => `${agent} asks you`,
};

function normalize(frame: AlpFrame): Normalized<AlpContext> {
  const event = 'method' in frame ? frame.params.event : frame;
  if (event.type !== 'question') {
    const name = event.type === OTHER ? event.name : event.type;
    throw new AppError('unsupported_frame', `ALP "${name}" events ask nothing of a reviewer; countersign takes "question" events`);
  }
  const q = event.question;
  const key = nativeKey(q.id);
  const matched = matchOptionSet(q.options ?? []);
  const set = matched?.set ?? 'question';
  const title = asTitle(q.body.trim().split(/\r?\n/, 1)[0]) ?? FALLBACK_TITLE[set](q.agent.trim() || 'ALP');
  // The root session is the conversation the user sees; a sub-agent's own session is in the stored frame.
  const source = { agent: q.agent || null, session: q.rootId };
  const context: AlpContext = { questionId: q.id, set, labels: matched?.labels ?? {} };

  if (matched) {
    const options: Option[] = Object.entries(matched.labels).map(([id, label]) => {
      const { outcome, style } = CHOICES[id as ChoiceId];
      return { id, label, outcome, style };
    });
    return {
      request: { title, summary: q.body.trim() === title ? null : q.body, kind: matched.kind, source, options, dedupe_key: key },
      nativeKey: key,
      context,
    };
  }
  // Any text answers an ALP question (the options are suggestions), so free text is always allowed;
  // a repeated suggestion is the same answer. Only a plain question puts the question id in the
  // record (as its question's id), so only here may it need a safe one.
  const suggestions = [...new Set(q.options ?? [])].map((label) => ({ label }));
  const ids = safeIds([q.id], 'question');
  return {
    request: {
      title,
      kind: 'question',
      source,
      input: { questions: [{ id: ids.ids[0]!, question: q.body, ...(suggestions.length ? { options: suggestions } : {}), allow_free_text: true }] },
      dedupe_key: key,
    },
    nativeKey: key,
    context: { ...context, ...withNativeIds({ questions: ids.map }) },
  };
}

// ---- Decided record → question.answer ----

/** The approving words ALP names (approve, yes, ok, đồng ý, duyệt) and their kin, English and Vietnamese. */
const CONSENT_WORDS = [
  'ok',
  'okay',
  'oke',
  'okie',
  'yes',
  'y',
  'yep',
  'yeah',
  'sure',
  'lgtm',
  'approve',
  'approved',
  'allow',
  'allowed',
  'accept',
  'accepted',
  'agree',
  'agreed',
  'confirm',
  'confirmed',
  'go ahead',
  'proceed',
  'đồng ý',
  'duyệt',
  'được',
  'có',
  'ừ',
  'vâng',
  'cho phép',
  'chấp nhận',
  'xác nhận',
];
/** Every label ALP reads as consent: its allow labels and "Trust this workspace", both languages. */
const CONSENT_LABELS = [
  ...(['allow_once', 'always_allow', 'approve'] as const).flatMap((id) => [CHOICES[id].en, CHOICES[id].vi]),
  'Trust this workspace',
  'Tin cậy workspace này',
];
const CONSENT_PHRASES = [...new Set([...CONSENT_WORDS, ...CONSENT_LABELS].map((p) => p.normalize('NFC').toLowerCase()))];

/**
 * Whether ALP could take `feedback`, sent as the answer text of a refusal, for consent. ALP
 * treats an answer that is an allow label or an approving word (any case, English or
 * Vietnamese) as "allow"/"approve", so a deny whose feedback reads like that must go out as a
 * dismissal with the feedback as its reason: a deny must never turn into an approval.
 *
 * Text that merely starts with such a word ("OK, but not before Friday") counts too, in case ALP
 * reads only the first word. A false alarm costs little: the feedback still goes, as the reason.
 */
export function couldReadAsConsent(feedback: string): boolean {
  const text = feedback
    .normalize('NFC')
    .toLowerCase()
    .trim()
    .replace(/[\s.!?…,;:]+$/u, '');
  return CONSENT_PHRASES.some((phrase) => text === phrase || (text.startsWith(phrase) && !/^[\p{L}\p{M}\p{N}]/u.test(text.slice(phrase.length))));
}

/** The wire label that answers with the decision's option. */
function choiceLabel(decision: Decision, context: AlpContext): string {
  const label = context.labels[decision.option as ChoiceId];
  if (label === undefined) throw new Error(`option "${decision.option}" has no ALP label`);
  return label;
}

/**
 * Permissions and confirmations answer with the chosen label; questions with the answer text.
 * A deny of a permission or confirmation answers with its own label, or with the reviewer's
 * feedback (ALP hands any other text to the agent as the reason of the refusal), unless that
 * feedback could read as consent. A declined question is dismissed, the feedback as its reason:
 * ALP reads any text sent to a question as the user's answer.
 * A request that ended undecided is dismissed, and so is a timeout, except where on_timeout
 * "approve" chose an option of a permission or confirmation.
 */
function renderReply(record: HandupRequest, context: AlpContext, env: ReplyEnv): unknown {
  const reply = (params: { text: string } | { dismiss: true; reason?: string }) => ({
    jsonrpc: '2.0',
    id: env.rpcId(),
    method: 'question.answer',
    params: { questionId: context.questionId, ...params },
  });
  const dismiss = (reason?: string | null) => reply(reason?.trim() ? { dismiss: true, reason } : { dismiss: true });
  const decision = record.decision;
  if (!decision) return dismiss();

  switch (record.status) {
    case 'approved':
      return reply({ text: choiceLabel(decision, context) });
    case 'answered': {
      const text = answerText(decision, recordQuestionId(context));
      return text ? reply({ text }) : dismiss();
    }
    case 'denied': {
      const feedback = decision.feedback?.trim() ? decision.feedback : null;
      // ALP takes any text as a question's answer: declining one never sends text (docs/formats/alp.md).
      if (context.set === 'question') return dismiss(feedback);
      if (feedback !== null) return couldReadAsConsent(feedback) ? dismiss(feedback) : reply({ text: feedback });
      const label = context.labels[decision.option as ChoiceId];
      return label !== undefined ? reply({ text: label }) : dismiss();
    }
    case 'expired':
      return decision.outcome === 'approve' && context.set !== 'question' ? reply({ text: choiceLabel(decision, context) }) : dismiss();
    default:
      return dismiss();
  }
}

// ---- Follow-ups ----

/** Choice ids whose label, in either language, is `answer` (ALP compares labels case-insensitively). */
function choicesLabelled(answer: string): ChoiceId[] {
  const wanted = canonical(answer).toLowerCase();
  return (Object.keys(CHOICES) as ChoiceId[]).filter((id) => CHOICES[id].en.toLowerCase() === wanted || CHOICES[id].vi.toLowerCase() === wanted);
}

/**
 * Without the stored record (no pending request has the key) `question.resolved` names no option
 * set, so the answer is read by ALP's labels alone: an allow label approves, a refusal label
 * denies, any other text answers the question. "Từ chối" refuses in both sets, so it names no
 * option and the record's own refusal stands in.
 */
function answeredUpstream(key: string, questionId: string, answer: string): FollowUp {
  const ids = choicesLabelled(answer);
  const outcomes = new Set(ids.map((id) => CHOICES[id].outcome));
  if (outcomes.size === 1) {
    const status = outcomes.has('approve') ? 'approved' : 'denied';
    return { kind: 'resolve', nativeKey: key, status, ...(ids.length === 1 ? { option: ids[0] } : {}) };
  }
  return {
    kind: 'resolve',
    nativeKey: key,
    status: 'answered',
    option: 'submit',
    fields: { answers: { [questionId]: { selected: [], text: answer } } },
  };
}

/** ALP's own approving words, as its runtime lists them ("answers that approve a proposal"). */
const ALP_APPROVALS = ['approve', 'approved', 'yes', 'y', 'ok', 'đồng ý', 'duyệt', 'có'];

/** A choice's labels in both languages, lower-cased, as ALP's runtime compares them. */
const labelsOf = (id: ChoiceId) => [CHOICES[id].en.toLowerCase(), CHOICES[id].vi.toLowerCase()];

/**
 * The answer read against the record it answers, the way ALP reads it. A question's answer that
 * is one of its suggestions (NFC, outer spaces aside) is that option selected, as a reviewer
 * picking it would be; other text is typed text. For a permission or confirmation ALP trims the
 * answer, lower-cases it and compares it exactly (nothing else is normalised): a permission
 * allows on "Always allow" where it offered that choice, on "Allow once" or one of its approving
 * words; a confirmation approves on an approving word (its "Approve"/"Duyệt" among them). Any
 * other answer is a refusal, with the answer as its reason unless it is the refusal's own label.
 * This is narrower than couldReadAsConsent on purpose: that one keeps a reviewer's refusal from
 * reading as consent, this one records what ALP did.
 */
function answeredAgainst(key: string, answer: string, { record, context }: FollowUpTarget<AlpContext>): FollowUp {
  if (context.set === 'question') {
    const wanted = canonical(answer);
    const id = recordQuestionId(context);
    const question = record.input?.questions?.find((q) => q.id === id);
    const label = question?.options?.find((o) => canonical(o.label) === wanted)?.label;
    const given = label !== undefined ? { selected: [label] } : { selected: [], text: answer };
    return { kind: 'resolve', nativeKey: key, status: 'answered', option: 'submit', fields: { answers: { [id]: given } } };
  }
  const choice = answer.trim().toLowerCase();
  const offered = (id: ChoiceId) => record.options.some((o) => o.id === id);
  let allowed: ChoiceId | undefined;
  if (context.set === 'permission') {
    if (offered('always_allow') && labelsOf('always_allow').includes(choice)) allowed = 'always_allow';
    else if (labelsOf('allow_once').includes(choice) || ALP_APPROVALS.includes(choice)) allowed = 'allow_once';
  } else if (ALP_APPROVALS.includes(choice)) allowed = 'approve';
  if (allowed !== undefined && offered(allowed)) return { kind: 'resolve', nativeKey: key, status: 'approved', option: allowed };
  const refusal: ChoiceId = context.set === 'permission' ? 'deny' : 'reject';
  const option = offered(refusal) ? { option: refusal } : {};
  return { kind: 'resolve', nativeKey: key, status: 'denied', ...option, ...(labelsOf(refusal).includes(choice) ? {} : { feedback: answer }) };
}

function followUp(frame: AlpFrame, _ctx: FrameContext, stored?: FollowUpTarget<AlpContext>): FollowUp {
  const event = 'method' in frame ? frame.params.event : frame;
  if (event.type !== 'question.resolved') {
    return { kind: 'ignored', reason: `ALP "${event.type === OTHER ? event.name : event.type}" events change no request` };
  }
  const key = nativeKey(event.questionId);
  switch (event.outcome) {
    case 'answered':
      return stored ? answeredAgainst(key, event.answer ?? '', stored) : answeredUpstream(key, event.questionId, event.answer ?? '');
    // A dismissal carries no answer to read a verdict from: the question was withdrawn from
    // the reviewer, as a cancel is, and needs no grant (docs/formats/alp.md).
    case 'dismissed':
    case 'canceled':
      return { kind: 'resolve', nativeKey: key, status: 'cancelled' };
    case 'timeout':
      return { kind: 'resolve', nativeKey: key, status: 'expired' };
  }
}

export const alpAdapter = {
  format: 'alp',
  frameSchema: AlpFrameSchema,
  followUpSchema: AlpFrameSchema,
  // ALP's own `userAskTimeoutMs`.
  config: { default_timeout: '30m' },
  normalize,
  renderReply,
  followUp,
} satisfies WireAdapter<AlpFrame, AlpContext, AlpFrame>;

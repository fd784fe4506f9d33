import { z } from 'zod';
import { parseDuration, ONE_YEAR_MS } from '../lib/durations.js';
import { NO_NUL, noNul } from '../lib/no-nul.js';

/**
 * The handup Request as clients send it (POST /v1/requests) and as countersign stores and
 * serves it. Field names and shapes follow handup's published schema exactly; limits follow
 * docs/api.md ("Bad input"). Unknown fields are rejected everywhere.
 */

const KiB = 1024;
const byteLength = (s: string) => Buffer.byteLength(s, 'utf8');
const text = (maxBytes: number) => z.string().refine((s) => byteLength(s) <= maxBytes, { message: `must be at most ${maxBytes} bytes` });
const nullableText = (maxBytes: number) => text(maxBytes).nullable();
/** Text the stores also keep in a column (lib/no-nul.ts). */
const columnText = (maxBytes: number) => text(maxBytes).refine(noNul, NO_NUL).nullable();
const jsonBytes = (v: unknown) => byteLength(JSON.stringify(v) ?? '');

/** handup's limits a wire adapter checks before a frame becomes a request (refused, never truncated). */
export const MAX_TITLE_BYTES = 512;
export const MAX_QUESTIONS = 10;
export const MAX_QUESTION_OPTIONS = 32;
// Room for what the native formats carry: PaperClip's 4000-character prompts in any script.
export const MAX_QUESTION_BYTES = 16 * KiB;
export const MAX_INPUT_FIELDS = 64;

export const KINDS = ['command', 'edit', 'review', 'question', 'info', 'custom'] as const;
export const RISKS = ['low', 'medium', 'high'] as const;
export const STATUSES = ['pending', 'approved', 'denied', 'answered', 'dismissed', 'expired', 'cancelled'] as const;
export const TERMINAL_STATUSES = STATUSES.filter((s) => s !== 'pending');
export const ON_TIMEOUT = ['deny', 'approve', 'expire'] as const;
export const OUTCOMES = ['approve', 'deny'] as const;
export const PREVIEW_TYPES = [
  'text',
  'markdown',
  'code',
  'diff',
  'files',
  'command',
  'json',
  'html',
  'image',
  'video',
  'audio',
  'file',
  'pdf',
  'email',
] as const;
export const SCOPES = ['session', 'project', 'always'] as const;

export const KindSchema = z.enum(KINDS);
export const RiskSchema = z.enum(RISKS);
export const StatusSchema = z.enum(STATUSES);
export const OnTimeoutSchema = z.enum(ON_TIMEOUT);
export const OutcomeSchema = z.enum(OUTCOMES);

export type Kind = z.infer<typeof KindSchema>;
export type Risk = z.infer<typeof RiskSchema>;
export type Status = z.infer<typeof StatusSchema>;
export type OnTimeout = z.infer<typeof OnTimeoutSchema>;
export type Outcome = z.infer<typeof OutcomeSchema>;

const blobRef = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be a blob hash sha256:<64 hex>');

export const SourceSchema = z.strictObject({
  integration: nullableText(256).optional(),
  agent: columnText(256).optional(),
  session: columnText(512).optional(),
  session_title: nullableText(1024).optional(),
  cwd: nullableText(4 * KiB).optional(),
  repo: nullableText(4 * KiB).optional(),
  branch: nullableText(1024).optional(),
  host: nullableText(1024).optional(),
});

/**
 * Option and question ids end up in URLs, element ids, CSS selectors, terminal output and native
 * replies, so they are held to a set no context has to escape.
 */
export const SAFE_ID = /^[A-Za-z0-9_.:-]{1,64}$/;
export const SafeIdSchema = z.string().regex(SAFE_ID, 'must be 1-64 characters of A-Z, a-z, 0-9, "_", ".", ":" and "-"');

// Words that name an outcome, in option ids and labels: an option called `deny` that approves
// would turn a deny answer (a decide hook's `{"option": "deny"}`, an admin script's) into an
// approval, and show a reviewer a "Deny" button that approves.
// Verbs, and their forms, that name an outcome; ALP's Vietnamese labels read without their
// marks ("Từ chối" is "tu choi").
const OUTCOME_VERBS: Record<Outcome, readonly string[]> = {
  approve: [
    'approve',
    'approved',
    'approves',
    'approving',
    'approval',
    'allow',
    'allowed',
    'allows',
    'allowing',
    'accept',
    'accepted',
    'accepts',
    'accepting',
    'confirm',
    'confirmed',
    'grant',
    'granted',
    'permit',
    'permitted',
    'cho phep',
    'duyet',
    'dong y',
  ],
  deny: [
    'deny',
    'denied',
    'denies',
    'denying',
    'denial',
    'reject',
    'rejected',
    'rejects',
    'rejecting',
    'rejection',
    'decline',
    'declined',
    'declines',
    'declining',
    'cancel',
    'cancelled',
    'canceled',
    'cancels',
    'cancelling',
    'canceling',
    'dismiss',
    'dismissed',
    'block',
    'blocked',
    'blocks',
    'blocking',
    'refuse',
    'refused',
    'refuses',
    'refusing',
    'forbid',
    'forbidden',
    'abort',
    'aborted',
    'aborting',
    'disallow',
    'disallowed',
    'disapprove',
    'disapproved',
    'tu choi',
    'khong dong y',
    'huy',
  ],
};
// Words that name an outcome only as the whole label or id: "Yes, cancel it" and "Never ask
// again" are common labels of the outcome their other words name.
const OUTCOME_WORDS: Record<Outcome, ReadonlySet<string>> = {
  approve: new Set([...OUTCOME_VERBS.approve, 'yes', 'ok', 'okay', 'submit', 'proceed', 'yes proceed', '同意', '允许', '批准', '确认', '是']),
  deny: new Set([
    ...OUTCOME_VERBS.deny,
    'no',
    'no way',
    'nope',
    'never',
    'stop',
    'dont',
    'do not',
    'not now',
    'nein',
    '拒绝',
    '拒絕',
    '拒否',
    '取消',
    '不允许',
  ]),
};
// Words that say how often or how long, not what: "Deny once", "Always allow", "Reject for this
// session" name nothing but the outcome. A pronoun or an object is the agent's action: "Cancel
// it", "Cancel all" and "Cancel subscription" may approve (a confirmation of a cancel).
const MODIFIERS = new Set(['once', 'always', 'forever', 'permanently', 'again', 'only']);
const MODIFIER_PHRASES = /\b(?:for|in) (?:this|the) (?:session|workspace|project|conversation|chat)\b|\bfor (?:now|session)\b|\bthis time\b/gu;
// A label that is nothing but one of these symbols reads as the outcome.
const OUTCOME_SYMBOLS: Record<Outcome, ReadonlySet<string>> = {
  approve: new Set(['✅', '✔', '✓', '☑', '👍', '🆗']),
  deny: new Set(['❌', '❎', '✖', '✗', '✘', '🚫', '⛔', '🛑', '👎']),
};
// "Don't allow", "Do not run" on an option that approves: a negated approval reads as a deny.
const NEGATION = /^(?:dont|do not|never|not)\s+(\p{L}+)/u;
const NEGATED_APPROVALS = new Set([...OUTCOME_VERBS.approve, 'run', 'proceed', 'continue', 'execute']);

// Letters of other scripts and forms that read as Latin ones, in both cases: Greek, Cyrillic,
// Cherokee, Lisu, small capitals ("DEΝY" with a Greek capital Nu reads "DENY").
const LOOKALIKES: ReadonlyArray<readonly [string, string]> = [
  ['ΑАꓮᎪᴀɑα', 'a'],
  ['ΒВꓐᏴʙв', 'b'],
  ['СꓚᏟᴄс', 'c'],
  ['ꓓᎠᴅԁĐđ', 'd'],
  ['ΕЕꓰᎬᴇеεё', 'e'],
  ['ꓝ', 'f'],
  ['ꓖᏀɢ', 'g'],
  ['ΗНꓧᎻʜн', 'h'],
  ['ΙІꓲɪіιı', 'i'],
  ['ЈꓙᎫᴊј', 'j'],
  ['ΚКꓗᏦᴋкκ', 'k'],
  ['ꓡᏞʟℓ', 'l'],
  ['ΜМꓟᎷᴍм', 'm'],
  ['Νꓠɴո', 'n'],
  ['ΟОꓳᎾᴏоοօ', 'o'],
  ['ΡРꓑᏢᴘрρ', 'p'],
  ['ԛ', 'q'],
  ['ꓣᎡʀ', 'r'],
  ['ЅꓢᏚꜱѕ', 's'],
  ['ΤТꓔᎢᴛтτ', 't'],
  ['ꓴᴜυ', 'u'],
  ['ꓦᏙᴠν', 'v'],
  ['ꓪᏔᴡԝ', 'w'],
  ['ΧХꓫχх', 'x'],
  ['ΥУꓬᎽʏу', 'y'],
  ['ΖꓜᏃᴢ', 'z'],
];
const LATIN_OF = new Map(LOOKALIKES.flatMap(([chars, latin]) => [...chars].map((c) => [c, latin] as const)));

/**
 * The word a person reads in an option's id or label: compatibility forms folded (NFKC: "Ｄｅｎｙ"),
 * accents and other combining marks dropped, invisible characters dropped ("Deny" + U+200B),
 * lookalike letters read as Latin, lower case, without the punctuation, symbols or spaces around
 * it ("Deny!", "✅ Deny").
 */
function readWord(s: string): string {
  return s
    .normalize('NFKC')
    .normalize('NFD')
    .replace(/[\p{M}\p{Default_Ignorable_Code_Point}]/gu, '')
    .replace(/\p{L}/gu, (c) => LATIN_OF.get(c) ?? c)
    .toLowerCase()
    .replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
}

/**
 * Whether an id or label reads as the `other` outcome for an option of `own`: as a whole
 * ("Deny", "D e n y", "❌"), as a verb of it with nothing but modifiers ("Reject this",
 * `deny_once`, `deny2`, "Always allow"), or, on an option that approves, as a negated approval
 * ("Don't allow"). A label that names an object besides the verb ("Cancel subscription", "Don't
 * cancel") is taken: the agent's action may well be to cancel.
 */
function namesOutcome(text: string, own: Outcome, other: Outcome): boolean {
  const symbols = text.replace(/[\s\uFE0F]/gu, '');
  if (OUTCOME_SYMBOLS[other].has(symbols)) return true;
  // Words apart at separators and where letters meet digits; an apostrophe joins ("don't"). A
  // key hint after a label, "Deny (esc)", "Yes (y)", is not part of what it says.
  const read = readWord(text.replace(/\s*[([](?:esc|enter|return|tab|space|[a-z0-9]|⏎|↵)[)\]]\s*$/iu, '')).replace(/['’]/gu, '');
  const words = read
    .replace(/(\p{L})(?=\p{N})|(\p{N})(?=\p{L})/gu, '$1$2 ')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  const spelled = words.length > 1 && words.every((w) => [...w].length === 1) ? words.join('') : null;
  const phrase = words.join(' ');
  if (OUTCOME_WORDS[other].has(read) || OUTCOME_WORDS[other].has(phrase) || (spelled !== null && OUTCOME_WORDS[other].has(spelled))) return true;
  const core = phrase
    .replace(MODIFIER_PHRASES, ' ')
    .split(' ')
    .filter((w) => w && !MODIFIERS.has(w) && !/^\p{N}+$/u.test(w))
    .join(' ');
  if (core !== phrase && OUTCOME_VERBS[other].includes(core)) return true;
  const negated = own === 'approve' ? NEGATION.exec(phrase) : null;
  return negated !== null && NEGATED_APPROVALS.has(negated[1]!);
}

/** Why an option's id or label names the outcome it does not have (`deny` that approves), or null. */
export function misleadingOption(o: { id: string; label: string; outcome: Outcome }): { field: 'id' | 'label'; message: string } | null {
  const other: Outcome = o.outcome === 'approve' ? 'deny' : 'approve';
  if (namesOutcome(o.id, o.outcome, other)) return { field: 'id', message: `"${o.id}" names the other outcome than ${o.outcome}` };
  if (namesOutcome(o.label, o.outcome, other)) return { field: 'label', message: `"${o.label}" names the other outcome than ${o.outcome}` };
  return null;
}

/** The longest label an option (of the request, or of a question) may have, in characters. */
export const MAX_LABEL = 1024;

export const OptionSchema = z.strictObject({
  id: SafeIdSchema,
  label: z.string().min(1).max(MAX_LABEL),
  outcome: OutcomeSchema,
  style: z.string().max(32).nullable().optional(),
});
export type Option = z.infer<typeof OptionSchema>;

const CommandSchema = z.strictObject({
  shell: nullableText(64 * KiB).optional(),
  argv: z.array(z.string()).nullable().optional(),
  cwd: nullableText(4 * KiB).optional(),
  env_keys: z.array(z.string()).optional(),
});

const PreviewFileSchema = z.strictObject({
  path: z.string(),
  blob: blobRef,
  mime: z.string(),
  size: z.number().int().min(0),
  lang: z.string().nullable().optional(),
});

const EmailAttachmentSchema = z.strictObject({
  name: z.string(),
  mime: z.string().nullable().optional(),
  size: z.number().int().min(0).nullable().optional(),
  blob: blobRef.nullable().optional(),
});

const EmailSchema = z.strictObject({
  from: z.string().nullable().optional(),
  to: z.array(z.string()).max(500).optional(),
  cc: z.array(z.string()).max(500).optional(),
  bcc: z.array(z.string()).max(500).optional(),
  reply_to: z.string().nullable().optional(),
  subject: text(998).optional(),
  date: z.string().nullable().optional(),
  body: z.string().optional(),
  body_html: z.string().nullable().optional(),
  attachments: z.array(EmailAttachmentSchema).max(64).optional(),
  in_reply_to: z
    .strictObject({ from: z.string().nullable().optional(), date: z.string().nullable().optional(), body: z.string().optional() })
    .nullable()
    .optional(),
});

/** handup's docs send `content` for inline text; it is accepted as an alias of `inline`. */
export const PreviewInputSchema = z
  .strictObject({
    type: z.enum(PREVIEW_TYPES),
    title: z.string().max(512).nullable().optional(),
    lang: z.string().max(64).nullable().optional(),
    inline: z.string().nullable().optional(),
    content: z.string().nullable().optional(),
    blob: blobRef.nullable().optional(),
    mime: z.string().max(256).nullable().optional(),
    name: z.string().max(1024).nullable().optional(),
    size: z.number().int().min(0).nullable().optional(),
    files: z.array(PreviewFileSchema).max(4096).nullable().optional(),
    entry: z.string().nullable().optional(),
    command: CommandSchema.nullable().optional(),
    email: EmailSchema.nullable().optional(),
    before_blob: blobRef.nullable().optional(),
    after_blob: blobRef.nullable().optional(),
  })
  .refine((p) => !(p.inline != null && p.content != null), {
    message: 'give either inline or content, not both',
    path: ['content'],
  });

export const QuestionOptionSchema = z.strictObject({
  label: z.string().min(1).max(MAX_LABEL),
  description: nullableText(16 * KiB).optional(),
  preview: nullableText(16 * KiB).optional(),
});

export const QuestionSchema = z
  .strictObject({
    // Answers are keyed by question id in a JSON object, where "__proto__" can never be sent.
    id: SafeIdSchema.refine((id) => id !== '__proto__', { message: '"__proto__" is reserved: it could never be answered' }),
    question: text(MAX_QUESTION_BYTES).refine((s) => s.trim().length > 0, { message: 'must not be empty' }),
    header: z.string().max(1024).nullable().optional(),
    options: z.array(QuestionOptionSchema).max(MAX_QUESTION_OPTIONS).optional(),
    multi: z.boolean().optional(),
    allow_free_text: z.boolean().optional(),
    recommended: z.number().int().min(0).nullable().optional(),
  })
  .superRefine((q, ctx) => {
    const labels = new Set<string>();
    (q.options ?? []).forEach((o, i) => {
      if (labels.has(o.label)) ctx.addIssue({ code: 'custom', message: `duplicate option label "${o.label}"`, path: ['options', i, 'label'] });
      labels.add(o.label);
    });
    if (q.recommended != null && q.recommended >= (q.options?.length ?? 0)) {
      ctx.addIssue({ code: 'custom', message: 'must be the index of one of the options', path: ['recommended'] });
    }
    if ((q.options?.length ?? 0) === 0 && !q.allow_free_text) {
      ctx.addIssue({ code: 'custom', message: 'a question needs options or allow_free_text: true', path: ['options'] });
    }
  });
export type Question = z.infer<typeof QuestionSchema>;

export const RequestInputSchema = z
  .looseObject({
    feedback: z.enum(['optional', 'required_on_deny']).nullable().optional(),
    fields: z.array(z.unknown()).max(MAX_INPUT_FIELDS).nullable().optional(),
    questions: z.array(QuestionSchema).min(1).max(MAX_QUESTIONS).nullable().optional(),
    // countersign's addition (the schema lets other keys pass): questions a submit may leave unanswered.
    optional_questions: z.array(z.string().min(1).max(128)).max(MAX_QUESTIONS).nullable().optional(),
  })
  .superRefine((input, ctx) => {
    const ids = new Set<string>();
    (input.questions ?? []).forEach((q, i) => {
      if (ids.has(q.id)) ctx.addIssue({ code: 'custom', message: `duplicate question id "${q.id}"`, path: ['questions', i, 'id'] });
      ids.add(q.id);
    });
    const optional = new Set<string>();
    (input.optional_questions ?? []).forEach((id, i) => {
      if (!ids.has(id)) ctx.addIssue({ code: 'custom', message: `"${id}" is not the id of one of input.questions`, path: ['optional_questions', i] });
      else if (optional.has(id)) ctx.addIssue({ code: 'custom', message: `"${id}" is listed twice`, path: ['optional_questions', i] });
      optional.add(id);
    });
    if (jsonBytes(input) > 64 * KiB) ctx.addIssue({ code: 'custom', message: 'must be at most 65536 bytes as JSON' });
  });

/** A request `timeout` as text: a duration of at most one year, or "none" (also the native formats' `?timeout=`). */
export const TimeoutTextSchema = z.string().refine((s) => s === 'none' || parseDuration(s).ok, {
  message: 'must be a positive duration with a unit (500ms, 30s, 10m, 2h, 1d, 1w) of at most one year, or "none"',
});
const timeoutField = TimeoutTextSchema.nullable();

/** The shapes of the server-managed fields a served Request carries, for one posted back. */
const unixMs = z.number().int().min(0);
const EchoedDecisionSchema = z.strictObject({
  option: z.string(),
  content_hash: z.string(),
  outcome: OutcomeSchema.nullable().optional(),
  feedback: z.string().nullable().optional(),
  fields: z.looseObject({}).nullable().optional(),
  decided_by: z.string().nullable().optional(),
  decided_at: unixMs.nullable().optional(),
  scope: z.string().nullable().optional(),
  rule_id: z.string().nullable().optional(),
  run_result: z.looseObject({}).nullable().optional(),
});
const EchoedRunSchema = z.strictObject({
  started_at: unixMs,
  lease_until: unixMs,
  timeout_ms: unixMs.optional(),
  elevated: z.boolean().optional(),
  stop: z.looseObject({}).nullable().optional(),
});

/** A request's title: one line of text, not blank (the MCP tools take it as the API does). */
export const TitleSchema = text(MAX_TITLE_BYTES).refine((s) => s.trim().length > 0, { message: 'must not be empty' });

/** POST /v1/requests body. Server-managed fields are accepted (a client may echo a Request) and ignored. */
export const CreateRequestSchema = z
  .strictObject({
    title: TitleSchema,
    tool: nullableText(512).optional(),
    callback_url: z.string().max(2048).nullable().optional(),
    summary: nullableText(64 * KiB).optional(),
    source: SourceSchema.optional(),
    kind: KindSchema.optional(),
    risk: RiskSchema.optional(),
    previews: z.array(PreviewInputSchema).max(64).optional(),
    options: z.array(OptionSchema).min(1).max(32).optional(),
    input: RequestInputSchema.nullable().optional(),
    timeout: timeoutField.optional(),
    run_timeout: z
      .string()
      .nullable()
      .refine((s) => s === null || parseDuration(s, { max: ONE_YEAR_MS }).ok, { message: 'must be a duration between 1ms and one year' })
      .optional(),
    on_timeout: OnTimeoutSchema.optional(),
    dedupe_key: z.string().min(1).max(512).refine(noNul, NO_NUL).nullable().optional(),
    // Server-managed: accepted so a served Request can be posted back, then overwritten; but
    // each must still have the Request's type (handup's Decision, RunClaim, Unix ms).
    id: z.string().optional(),
    status: StatusSchema.optional(),
    content_hash: z.string().optional(),
    created_at: unixMs.optional(),
    expires_at: unixMs.nullable().optional(),
    decision: EchoedDecisionSchema.nullable().optional(),
    run: EchoedRunSchema.nullable().optional(),
    run_interrupted: unixMs.nullable().optional(),
  })
  .superRefine((r, ctx) => {
    const ids = new Set<string>();
    (r.options ?? []).forEach((o, i) => {
      if (ids.has(o.id)) ctx.addIssue({ code: 'custom', message: `duplicate option id "${o.id}"`, path: ['options', i, 'id'] });
      ids.add(o.id);
      const misleading = misleadingOption(o);
      if (misleading) ctx.addIssue({ code: 'custom', message: misleading.message, path: ['options', i, misleading.field] });
    });
    if (r.kind === 'question' && !(r.input?.questions && r.input.questions.length > 0)) {
      ctx.addIssue({ code: 'custom', message: 'kind "question" needs input.questions (1 to 10 questions)', path: ['input', 'questions'] });
    }
    if (r.kind === 'info' && r.input != null) {
      ctx.addIssue({ code: 'custom', message: 'info notices take no input', path: ['input'] });
    }
  });
export type CreateRequestBody = z.infer<typeof CreateRequestSchema>;

export const DecisionBodySchema = z.strictObject({
  option: z.string().min(1).max(64),
  content_hash: z.string().min(1).max(128),
  feedback: nullableText(64 * KiB).optional(),
  fields: z
    .looseObject({
      answers: z
        .record(z.string(), z.strictObject({ selected: z.array(z.string()).max(32).optional(), text: nullableText(16 * KiB).optional() }))
        .nullable()
        .optional(),
    })
    .refine((f) => jsonBytes(f) <= 64 * KiB, { message: 'must be at most 65536 bytes as JSON' })
    .nullable()
    .optional(),
  scope: z.enum(SCOPES).nullable().optional(),
});
export type DecisionBody = z.infer<typeof DecisionBodySchema>;

// ---- The stored and served record (what every endpoint returns). ----

export type Source = {
  integration: string | null;
  agent: string | null;
  session: string | null;
  session_title?: string | null;
  cwd: string | null;
  repo: string | null;
  branch: string | null;
  host: string | null;
};

export type Preview = Omit<z.infer<typeof PreviewInputSchema>, 'content'>;

export interface Answer {
  selected: string[];
  text?: string | null;
}

export interface Decision {
  option: string;
  content_hash: string;
  outcome: Outcome | null;
  feedback: string | null;
  fields: ({ answers?: Record<string, Answer> | null } & Record<string, unknown>) | null;
  decided_by: string | null;
  decided_at: number | null;
  scope?: string | null;
  /** The rule that decided (`decided_by: "rule"`), or the rule a scoped approval created. */
  rule_id?: string | null;
}

export type RequestInput = z.infer<typeof RequestInputSchema>;

export interface HandupRequest {
  id: string;
  title: string;
  tool?: string | null;
  callback_url: string | null;
  summary: string | null;
  source: Source;
  kind: Kind;
  risk: Risk;
  previews: Preview[];
  options: Option[];
  input: RequestInput | null;
  timeout: string | null;
  run_timeout?: string | null;
  on_timeout: OnTimeout;
  dedupe_key: string | null;
  status: Status;
  content_hash: string;
  created_at: number;
  expires_at: number | null;
  decision: Decision | null;
}

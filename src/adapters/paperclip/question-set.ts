import { z } from 'zod';
import { AppError } from '../../lib/errors.js';
import { MAX_QUESTIONS, MAX_QUESTION_BYTES, MAX_QUESTION_OPTIONS, type Question } from '../../requests/request-schema.js';
import { byNativeId, distinctLabels, recordIdOf, safeIds, type IdMap } from '../adapter-kit.js';
import { QUESTION_SET, flag, unique, type Answers, type Preview } from './common.js';
import { RUNNER_TEST_MS, TextValidationSchema, checksPattern, textValidationProblem, type TextValidation } from './text-validation.js';

/**
 * PaperClip question sets (`paperclip.question_set.v1`, test/schemas/paperclip-question-set.schema.json) and their
 * mapping to handup questions and back: the form of v2 input requests and driver requests.
 */

const QuestionOptionSchema = z.strictObject({
  id: z.string().min(1).max(160),
  label: z.string().min(1).max(1000),
  description: z.string().max(4000).optional(),
  recommended: z.boolean().optional(),
});

export const QuestionSetQuestionSchema = z
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
    customAnswer: z.strictObject({ enabled: z.literal(true), label: z.string().max(1000).optional(), placeholder: z.string().max(1000).optional() }).optional(),
    textValidation: TextValidationSchema.optional(),
  })
  .superRefine((q, ctx) => {
    const options = q.options ?? [];
    if (q.answerMode === 'text' && options.length > 0) flag(ctx, ['options'], 'text questions cannot define options');
    if (q.answerMode === 'text' && q.customAnswer) flag(ctx, ['customAnswer'], 'text questions do not use a custom answer');
    if (q.answerMode !== 'text' && options.length === 0) flag(ctx, ['options'], 'select questions need at least one option');
    unique(ctx, options, 'id', ['options'], 'option id');
    const recommended = options.filter((o) => o.recommended).length;
    if (recommended > 1) flag(ctx, ['options'], 'at most one option may be recommended');
    if (q.intent === 'decision') decisionIntent(ctx, q, recommended);
  });

/**
 * The question set schema's rules for `intent: "decision"` (a consequential choice), plus the two
 * its description leaves to PaperClip's parser (distinct labels, exactly one recommended).
 */
function decisionIntent(
  ctx: z.RefinementCtx,
  q: {
    required: boolean;
    answerMode: string;
    recommendationRationale?: string | undefined;
    customAnswer?: unknown;
    options?: Array<{ label: string }> | undefined;
  },
  recommended: number,
) {
  const why = 'a decision question';
  if (!q.required) flag(ctx, ['required'], `${why} must be required`);
  if (q.answerMode !== 'single_select') flag(ctx, ['answerMode'], `${why} must be single_select`);
  if (!q.recommendationRationale) flag(ctx, ['recommendationRationale'], `${why} needs a recommendationRationale`);
  if (q.customAnswer) flag(ctx, ['customAnswer'], `${why} takes no custom answer`);
  const options = q.options ?? [];
  if (options.length < 2) flag(ctx, ['options'], `${why} needs at least two options`);
  else if (recommended !== 1) flag(ctx, ['options'], `${why} needs exactly one recommended option`);
  unique(ctx, options, 'label', ['options'], 'option label');
}
export type QuestionSetQuestion = z.infer<typeof QuestionSetQuestionSchema>;

export const QuestionSetSchema = z
  .strictObject({
    schema: z.literal(QUESTION_SET),
    title: z.string().max(1000).optional(),
    description: z.string().max(4000).optional(),
    submitLabel: z.string().max(200).optional(),
    questions: z.array(QuestionSetQuestionSchema).min(1).max(64),
  })
  .superRefine((set, ctx) => unique(ctx, set.questions, 'id', ['questions'], 'question id'));
export type QuestionSet = z.infer<typeof QuestionSetSchema>;

/** A handup question's option labels back to PaperClip option ids. */
export interface QuestionMap {
  /** The native question id; the record's may differ (the context's `nativeIds.questions` leads back). */
  id: string;
  mode: 'single' | 'multi' | 'text';
  /** Free text goes back as `customText` (question sets) or `otherText` (issue threads). */
  custom: boolean;
  /** The free-text option of an issue-thread question, selected whenever text is sent. */
  freeTextOption?: string | null;
  options: Array<[label: string, id: string]>;
  /** The question's textValidation, checked on the text or custom answer when the reviewer decides. */
  validation?: TextValidation;
}

export function mapQuestionSet(set: QuestionSet) {
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
  const ids = safeIds(
    set.questions.map((q) => q.id),
    'question',
  );
  // `required: false` may be left unanswered (docs/formats/paperclip.md); the record lists them for the domain and the page.
  const optional = set.questions.flatMap((q, i) => (q.required ? [] : [ids.ids[i]!]));
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
      id: ids.ids[i]!,
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
      ...(q.textValidation ? { validation: q.textValidation } : {}),
    });
    if (q.recommendationRationale?.trim()) {
      previews.push({ type: 'markdown', title: `Recommendation for ${q.id}`, inline: q.recommendationRationale });
    }
    notes.push(...questionNotes(q, labels));
  });
  return { questions, optional, maps, previews, notes, questionIds: ids.map };
}

function questionNotes(q: QuestionSetQuestion, labels: string[]): string[] {
  const notes: string[] = [];
  const pattern = q.textValidation?.pattern;
  if (pattern !== undefined && !checksPattern(pattern)) {
    notes.push(
      `question "${q.id}": textValidation.pattern needs a backtracking engine: an answer it cannot test within ${RUNNER_TEST_MS} ms is left to the runner`,
    );
  }
  if (q.helpText && withHelp(q.prompt, q.helpText) === q.prompt) {
    notes.push(`question "${q.id}": helpText left out (over ${MAX_QUESTION_BYTES} bytes)`);
  }
  if (labels.some((l, i) => l !== q.options?.[i]?.label)) notes.push(`question "${q.id}": duplicate option labels suffixed with their ids`);
  return notes;
}

export function withHelp(prompt: string, help: string | null | undefined): string {
  if (!help?.trim()) return prompt;
  const joined = `${prompt}\n\n${help}`;
  return Buffer.byteLength(joined, 'utf8') <= MAX_QUESTION_BYTES ? joined : prompt;
}

export function optionIds(q: QuestionMap, labels: string[] | undefined): string[] {
  const byLabel = new Map(q.options);
  return (labels ?? []).flatMap((label) => {
    const id = byLabel.get(label);
    return id === undefined ? [] : [id];
  });
}

/**
 * Answers → `paperclip.question_response.v1`: keyed by the native question ids (`questionIds`
 * leads from the record's), labels mapped back to option ids.
 */
export function questionResponse(questions: readonly QuestionMap[], answers: Answers, questionIds?: IdMap) {
  const out: Array<[string, { selectedOptionIds?: string[]; text?: string; customText?: string }]> = [];
  for (const q of questions) {
    const a = answers[recordIdOf(questionIds, q.id)];
    if (!a) continue;
    const typed = a.text?.trim() ? a.text : null;
    if (q.mode === 'text') {
      if (typed) out.push([q.id, { text: typed }]);
      continue;
    }
    const ids = optionIds(q, a.selected);
    const answer: { selectedOptionIds?: string[]; customText?: string } = {};
    if (ids.length > 0) answer.selectedOptionIds = ids;
    // PaperClip refuses a single-select answer with both a selection and custom text: the selection wins.
    if (typed && q.custom && !(q.mode === 'single' && ids.length > 0)) answer.customText = typed;
    if (answer.selectedOptionIds || answer.customText) out.push([q.id, answer]);
  }
  return { schema: 'paperclip.question_response.v1', answers: byNativeId(out) };
}

/**
 * Throws 400 `invalid_decision` naming the question when an answer could not be sent whole:
 * PaperClip refuses a single-select answer with both an option and custom text, and
 * questionResponse would keep the option and drop what the reviewer typed.
 */
export function checkAnswerForms(questions: readonly QuestionMap[], answers: Answers, questionIds?: IdMap): void {
  for (const q of questions) {
    const id = recordIdOf(questionIds, q.id);
    const a = Object.hasOwn(answers, id) ? answers[id] : undefined;
    if (q.mode === 'single' && q.custom && a?.text?.trim() && optionIds(q, a.selected).length > 0) {
      throw new AppError('invalid_decision', `fields.answers.${id}: this question takes one option or typed text, not both`);
    }
  }
}

/**
 * Throws 400 `invalid_decision` naming the question when an answer, as it would be sent, breaks
 * its textValidation: the text of a text question, the custom text of a select question.
 */
export function checkTextValidation(questions: readonly QuestionMap[], answers: Answers, questionIds?: IdMap): void {
  const sent = questionResponse(questions, answers, questionIds).answers;
  for (const q of questions) {
    const answer = Object.hasOwn(sent, q.id) ? sent[q.id] : undefined;
    const text = q.mode === 'text' ? answer?.text : answer?.customText;
    if (!q.validation || text === undefined) continue;
    const problem = textValidationProblem(text, q.validation);
    if (problem) throw new AppError('invalid_decision', `fields.answers.${recordIdOf(questionIds, q.id)}: ${problem} (PaperClip textValidation)`);
  }
}

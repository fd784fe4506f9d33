import { z } from 'zod';
import { formatIssuePath } from '../lib/errors.js';

/** What a decide hook answered: no opinion, or a decision to apply. */
export type HookAnswer = { type: 'none' } | { type: 'decide'; option: string; feedback: string | null; fields: Record<string, unknown> | null };

/** A hook that failed: timed out, crashed, or answered something that is not a decision. */
export class HookFailure extends Error {
  override name = 'HookFailure';
  constructor(
    readonly reason: 'timeout' | 'exit' | 'spawn' | 'http' | 'network' | 'too_large' | 'bad_answer' | 'refused' | 'queue_full',
    message: string,
  ) {
    super(message);
  }
}

/** An answer is small: a decision, not a document. */
export const MAX_ANSWER_BYTES = 64 * 1024;

const AnswerSchema = z.strictObject({
  option: z.string().min(1).max(64),
  feedback: z.string().max(65_536).nullable().optional(),
  fields: z.record(z.string(), z.unknown()).nullable().optional(),
});

// Keys an Open Policy Agent data API answer may carry beside `result`.
const OPA_METADATA = new Set(['decision_id', 'metrics', 'provenance', 'warning']);

/**
 * Reads a hook's answer. Empty text is no opinion. Otherwise one JSON object
 * `{"option", "feedback"?, "fields"?}`; a `url` hook may wrap it as an Open Policy Agent answer,
 * `{"result": {...}}`, where `{"result": null}` or no result at all (OPA's undefined decision)
 * is no opinion. Anything else throws HookFailure('bad_answer').
 */
export function parseHookAnswer(text: string, { opa }: { opa: boolean }): HookAnswer {
  if (text.trim() === '') return { type: 'none' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HookFailure('bad_answer', 'the answer is not JSON');
  }
  if (opa && isObject(value)) {
    const keys = Object.keys(value);
    if ('result' in value) {
      if (keys.some((k) => k !== 'result' && !OPA_METADATA.has(k)))
        throw new HookFailure('bad_answer', 'an answer with "result" has other fields besides OPA metadata');
      value = value.result;
      if (value === null || value === undefined) return { type: 'none' };
    } else if (keys.every((k) => OPA_METADATA.has(k))) {
      return { type: 'none' };
    }
  }
  const parsed = AnswerSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.code === 'unrecognized_keys' ? `${issue.keys.join(', ')}: unknown field` : `${formatIssuePath(issue.path)}: ${issue.message}`;
    throw new HookFailure('bad_answer', `the answer is not a decision object {"option", "feedback"?, "fields"?}: ${where}`);
  }
  return { type: 'decide', option: parsed.data.option, feedback: parsed.data.feedback ?? null, fields: parsed.data.fields ?? null };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

import { RE2JS } from 're2js';
import { z } from 'zod';
import { flag } from './common.js';

/**
 * A question set's `textValidation` (test/schemas/paperclip-question-set.schema.json) and the check PaperClip runs on a
 * text or custom answer when the runner resolves the request (parsePaperclipQuestionResponse):
 * lengths in UTF-16 code units, the pattern unanchored, numbers as JavaScript's Number() reads
 * them. countersign runs the same check when the reviewer decides, so a violating answer is
 * refused there instead of reaching a runner that would refuse it.
 */

export const TextValidationSchema = z
  .strictObject({
    minLength: z.number().int().min(0).max(100000).optional(),
    maxLength: z.number().int().min(0).max(100000).optional(),
    pattern: z.string().max(1000).optional(),
    inputType: z.enum(['text', 'number', 'integer']).optional(),
    minimum: z.number().optional(),
    maximum: z.number().optional(),
  })
  .superRefine((v, ctx) => {
    // PaperClip's own parser refuses these, so its runner would never have asked.
    if (v.minLength !== undefined && v.maxLength !== undefined && v.minLength > v.maxLength) flag(ctx, ['minLength'], 'minLength cannot exceed maxLength');
    if (v.minimum !== undefined && v.maximum !== undefined && v.minimum > v.maximum) flag(ctx, ['minimum'], 'minimum cannot exceed maximum');
    if (v.pattern !== undefined && jsPattern(v.pattern) === null) flag(ctx, ['pattern'], 'must be a valid regular expression');
  });
export type TextValidation = z.infer<typeof TextValidationSchema>;

function jsPattern(pattern: string): RegExp | null {
  try {
    return new RegExp(pattern);
  } catch {
    return null;
  }
}

/**
 * The pattern compiled for a linear-time engine (RE2): a pattern comes from the agent, and a
 * backtracking engine would let one freeze the daemon on a reviewer's answer. Null when the
 * pattern needs backtracking (lookarounds, backreferences); it is then left to the runner.
 */
function linearPattern(pattern: string): RE2JS | null {
  try {
    return RE2JS.compile(pattern);
  } catch {
    return null;
  }
}

/** Whether countersign can check this pattern itself (see linearPattern). */
export const checksPattern = (pattern: string) => linearPattern(pattern) !== null;

/** Why PaperClip would refuse `text` under `v`, in its own words; null when it would take it. */
export function textValidationProblem(text: string, v: TextValidation): string | null {
  if (v.minLength !== undefined && text.length < v.minLength) return `must contain at least ${v.minLength} characters`;
  if (v.maxLength !== undefined && text.length > v.maxLength) return `must contain at most ${v.maxLength} characters`;
  if (v.pattern !== undefined && linearPattern(v.pattern)?.test(text) === false) return `does not match the required format ${v.pattern}`;
  if (v.inputType === 'number' || v.inputType === 'integer') {
    const n = Number(text);
    if (!Number.isFinite(n) || (v.inputType === 'integer' && !Number.isInteger(n))) return `must be a valid ${v.inputType}`;
    if (v.minimum !== undefined && n < v.minimum) return `must be at least ${v.minimum}`;
    if (v.maximum !== undefined && n > v.maximum) return `must be at most ${v.maximum}`;
  }
  return null;
}

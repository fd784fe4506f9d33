import { createContext, Script } from 'node:vm';
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
 * The pattern compiled for a linear-time engine (RE2), or null when it needs backtracking
 * (lookarounds, backreferences).
 */
function linearPattern(pattern: string): RE2JS | null {
  try {
    return RE2JS.compile(pattern);
  } catch {
    return null;
  }
}

// The runner's own test, `new RegExp(pattern).test(text)`: V8's engine, no flags, so `\p{L}`,
// `[[:alpha:]]` or `.` against `\r` mean what they mean to the runner (RE2 reads them otherwise).
// The pattern comes from the agent and a backtracking engine can be made to run for ever, so the
// test runs under a time limit, in a context of its own that holds nothing but the two strings.
const FIRST_TRY_MS = 50;
const TRIES_MS = [FIRST_TRY_MS, 4 * FIRST_TRY_MS];
/** How long a pattern may run, over both tries, before it counts as too slow. */
export const RUNNER_TEST_MS = TRIES_MS.reduce((a, b) => a + b);
const runnerTest = new Script('new RegExp(pattern).test(text)');
const sandbox = createContext({ pattern: '', text: '' });
// Compiled in its context now, not in the first decision's time limit.
runnerTest.runInContext(sandbox);

/** Whether PaperClip's runner would find `pattern` in `text`; null when that cannot be told in time. */
function runnerMatches(pattern: string, text: string): boolean | null {
  Object.assign(sandbox, { pattern, text });
  try {
    // The limit is wall time: on a busy machine an ordinary pattern can miss it once, so a
    // pattern gets a second, longer try before it counts as too slow.
    for (const ms of TRIES_MS) {
      try {
        return runnerTest.runInContext(sandbox, { timeout: ms }) === true;
      } catch (err) {
        if ((err as { code?: string }).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw err;
      }
    }
    // Too slow for the runner's engine: RE2 answers in linear time where it can read the pattern.
    return linearPattern(pattern)?.test(text) ?? null;
  } finally {
    Object.assign(sandbox, { pattern: '', text: '' });
  }
}

/** Whether countersign can always tell this pattern's answer (RE2 can read it, should V8 take too long). */
export const checksPattern = (pattern: string) => linearPattern(pattern) !== null;

/** Why PaperClip would refuse `text` under `v`, in its own words; null when it would take it. */
export function textValidationProblem(text: string, v: TextValidation): string | null {
  if (v.minLength !== undefined && text.length < v.minLength) return `must contain at least ${v.minLength} characters`;
  if (v.maxLength !== undefined && text.length > v.maxLength) return `must contain at most ${v.maxLength} characters`;
  if (v.pattern !== undefined && runnerMatches(v.pattern, text) === false) return `does not match the required format ${v.pattern}`;
  if (v.inputType === 'number' || v.inputType === 'integer') {
    const n = Number(text);
    if (!Number.isFinite(n) || (v.inputType === 'integer' && !Number.isInteger(n))) return `must be a valid ${v.inputType}`;
    if (v.minimum !== undefined && n < v.minimum) return `must be at least ${v.minimum}`;
    if (v.maximum !== undefined && n > v.maximum) return `must be at most ${v.maximum}`;
  }
  return null;
}

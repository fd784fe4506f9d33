import { z } from 'zod';
import { REQUEST_FORMATS } from '../formats/request-formats.js';
import { KINDS, RiskSchema, RISKS, TimeoutTextSchema } from '../requests/request-schema.js';
import { compileGlob } from './glob.js';

/**
 * A rule as the config file's `rules:` list and `POST /v1/rules` take it.
 * Every regex and glob is compiled here, so a rule that parses is a rule that runs.
 */

export const RULE_ID = /^[a-z0-9][a-z0-9-]{0,63}$/;
export const RULE_ACTIONS = ['approve', 'deny', 'ask', 'dismiss'] as const;
export type RuleAction = (typeof RULE_ACTIONS)[number];
/** The longest regex or glob a rule takes (a scoped approval of a long exact command is refused beyond it). */
export const MAX_PATTERN = 8192;

/** An exact value or a list of them (any one matches). */
const exact = <T extends z.ZodType<string>>(item: T) => z.union([item, z.array(item).min(1, 'must list at least one value').max(64)]);
const name = z.string().min(1, 'must not be empty').max(512);

const glob = z
  .string()
  .max(MAX_PATTERN)
  .superRefine((s, ctx) => {
    try {
      compileGlob(s);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `invalid glob: ${(err as Error).message}` });
    }
  });
/** A glob or a list of them (any one matches). */
const globs = exact(glob);

const regex = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_PATTERN)
  .superRefine((s, ctx) => {
    try {
      new RegExp(s, 'u');
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `invalid regular expression: ${(err as Error).message.replace(/^Invalid regular expression: /, '')}` });
    }
  });

/**
 * What `match:` takes (rules, decide hooks, notification hooks). `format` names one of
 * `formats`, the request formats of the adapters the daemon is wired with.
 */
export function ruleMatchSchema(formats: readonly string[]) {
  return z
    .strictObject({
      agent: exact(name).optional(),
      session: exact(name).optional(),
      integration: exact(name).optional(),
      format: exact(z.enum(formats as [string, ...string[]])).optional(),
      kind: exact(z.enum(KINDS)).optional(),
      risk: exact(z.enum(RISKS)).optional(),
      tool: globs.optional(),
      cwd: globs.optional(),
      repo: globs.optional(),
      command: regex.optional(),
      title: regex.optional(),
    })
    .refine((m) => Object.values(m).some((v) => v !== undefined), { message: 'must name at least one field to match' });
}
export type RuleMatchSchemaType = ReturnType<typeof ruleMatchSchema>;

/** The match of the registry's formats. */
export const RuleMatchSchema = ruleMatchSchema(REQUEST_FORMATS);
export type RuleMatch = z.infer<typeof RuleMatchSchema>;

/**
 * The ids scoped approvals give their rules (`scope-` and a lower-case ULID). Approve rules of
 * that prefix are held to the remembered action (scope-rule.ts), so an operator's own approve
 * rule may not take the prefix unless it is such an id (a remembered approval restored from
 * GET /v1/rules): it would be narrowed without a word.
 */
const SCOPE_RULE_ID = /^scope-[0-9a-hjkmnp-tv-z]{26}$/;

const ruleShape = {
  id: z.string().regex(RULE_ID, 'must be 1-64 characters of a-z, 0-9 and -, starting with a letter or digit'),
  action: z.enum(RULE_ACTIONS),
  feedback: z.string().min(1).max(65_536).optional(),
  risk: RiskSchema.optional(),
  timeout: TimeoutTextSchema.optional(),
};

const asList = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** The checks across fields: what each action takes, and dismiss rules for info notices only. */
function checkAction(
  rule: { id: string; action: RuleAction; match: RuleMatch; feedback?: string | undefined; risk?: unknown; timeout?: unknown },
  ctx: z.RefinementCtx,
) {
  if (rule.action === 'approve' && rule.id.startsWith('scope-') && !SCOPE_RULE_ID.test(rule.id)) {
    ctx.addIssue({ code: 'custom', path: ['id'], message: 'an approve rule named scope-… is held to what a scoped approval remembered; choose another id' });
  }
  if (rule.feedback !== undefined && rule.action !== 'deny') {
    ctx.addIssue({ code: 'custom', path: ['feedback'], message: 'only a deny rule takes feedback' });
  }
  for (const key of ['risk', 'timeout'] as const) {
    if (rule[key] !== undefined && rule.action !== 'ask') {
      ctx.addIssue({ code: 'custom', path: [key], message: `only an ask rule overrides the ${key}` });
    }
  }
  const kinds = asList(rule.match.kind);
  if (rule.action === 'dismiss' && !(kinds.length > 0 && kinds.every((k) => k === 'info'))) {
    ctx.addIssue({ code: 'custom', path: ['match', 'kind'], message: 'a dismiss rule must match kind: info (it ends info notices only)' });
  }
  if (rule.action !== 'dismiss' && kinds.includes('info')) {
    ctx.addIssue({ code: 'custom', path: ['match', 'kind'], message: 'info notices are matched only by dismiss rules' });
  }
}

/**
 * The rule schemas over one `match` schema: a rule of the config file (`rule`), a rule sent to
 * `POST /v1/rules`, which may also expire (`storedInput`, Unix ms), and the config file's
 * `rules:` list, ids unique (`list`).
 */
export function ruleSchemas(match: RuleMatchSchemaType) {
  const rule = z.strictObject({ ...ruleShape, match }).superRefine(checkAction);
  const storedInput = z.strictObject({ ...ruleShape, match, expires_at: z.number().int().positive().nullable().optional() }).superRefine(checkAction);
  const list = z.array(rule).superRefine((rules, ctx) => {
    const seen = new Set<string>();
    rules.forEach((r, i) => {
      if (seen.has(r.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate rule id "${r.id}"` });
      seen.add(r.id);
    });
  });
  return { rule, storedInput, list };
}

const registered = ruleSchemas(RuleMatchSchema);
export const RuleSchema = registered.rule;
export type Rule = z.infer<typeof RuleSchema>;
export const StoredRuleInputSchema = registered.storedInput;
export type StoredRuleInput = z.infer<typeof StoredRuleInputSchema>;
export const RuleListSchema = registered.list;

import { z } from 'zod';
import { durationSchema } from '../lib/duration-schema.js';
import { RuleMatchSchema, type RuleMatchSchemaType } from '../policy/rule-schema.js';

/** `decide_hooks:` in the config file: a program or a service that may decide. */

export const HOOK_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;
export const DEFAULT_HOOK_TIMEOUT = '10s';

// At most an hour: a wait is a timer, and Node's timers cannot wait past 24.8 days.
const duration = durationSchema({ example: '2s or 10s', max: 3_600_000 });

/** The decide hook schemas over one `match` schema (the registry's formats, or the wired ones). */
export function decideHookSchemas(match: RuleMatchSchemaType) {
  const hook = z
    .strictObject({
      name: z.string().regex(HOOK_NAME, 'must be 1-64 characters of a-z, 0-9 and -, starting with a letter or digit'),
      // An argv list, run without a shell: a string would invite shell syntax nobody interprets.
      exec: z.array(z.string().min(1, 'must not be empty')).min(1, 'must name the program').optional(),
      url: z
        .string()
        .refine((s) => {
          try {
            return ['http:', 'https:'].includes(new URL(s).protocol);
          } catch {
            return false;
          }
        }, 'must be an http:// or https:// URL')
        .optional(),
      match: match.optional(),
      timeout: duration.optional(),
    })
    .superRefine((h, ctx) => {
      if ((h.exec === undefined) === (h.url === undefined)) {
        ctx.addIssue({ code: 'custom', path: ['exec'], message: 'give exactly one of exec (an argv list) or url' });
      }
    });
  const list = z.array(hook).superRefine((hooks, ctx) => {
    const seen = new Set<string>();
    hooks.forEach((h, i) => {
      if (seen.has(h.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate hook name "${h.name}"` });
      seen.add(h.name);
    });
  });
  return { hook, list };
}

const registered = decideHookSchemas(RuleMatchSchema);
export const DecideHookSchema = registered.hook;
export type DecideHook = z.infer<typeof DecideHookSchema>;
export const DecideHookListSchema = registered.list;

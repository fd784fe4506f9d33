import Mustache from 'mustache';
import { z } from 'zod';
import { durationSchema } from '../lib/duration-schema.js';
import { RuleMatchSchema, type RuleMatchSchemaType } from '../policy/rule-schema.js';

/** The events a hook can ask for; `events` defaults to all of them. */
export const HOOK_EVENTS = ['request.created', 'request.decided', 'request.expired', 'request.cancelled', 'request.reminder', 'request.expiring'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** Sent when a burst window closes with notifications held back, whatever a hook's `events`. */
export const SUMMARY_EVENT = 'notifications.summary';

/**
 * Whether `hook` sends decision links: on for the hook, on for the daemon, and a public address
 * to link to. One rule for making links and for honouring them (a link of a hook that no longer
 * sends any decides nothing).
 */
export function issuesLinks(
  config: { notifications: { decision_links: boolean }; public_url: string | null },
  hook: { decision_links?: boolean | undefined },
): boolean {
  return config.notifications.decision_links && config.public_url !== null && hook.decision_links === true;
}

export const HOOK_FORMATS = ['json', 'slack', 'discord', 'teams', 'google-chat', 'ntfy', 'template'] as const;
export type HookFormat = (typeof HOOK_FORMATS)[number];

const duration = durationSchema({ example: '30s, 10m or 2h' });
// At most an hour: a wait is a timer, and Node's timers cannot wait past 24.8 days.
const timeout = durationSchema({ example: '10s or 1m', max: 3_600_000 });

/** An absolute http(s) URL without credentials or a fragment (secrets belong in the path or query the service gives). */
export function checkHttpUrl(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http:// or https:// URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an absolute http:// or https:// URL';
  if (url.username || url.password) return 'must not contain credentials';
  if (raw.includes('#')) return 'must not contain a fragment';
  return null;
}

/**
 * One `hooks:` entry. Exactly one of `webhook` (a URL) and `exec` (an argv list, never run
 * through a shell); `format`, `template`, `content_type` and `secret_env` are for webhooks.
 * `match` is the policy's (`match` of the rules), over the formats the daemon is wired with.
 */
export function hookSchema(match: RuleMatchSchemaType) {
  return z
    .strictObject({
      name: z.string().regex(/^[a-z0-9-]{1,64}$/, 'must be 1-64 characters of a-z, 0-9 and -'),
      webhook: z.string().optional(),
      exec: z.array(z.string().min(1, 'must not be empty')).min(1, 'must name a program').optional(),
      format: z.enum(HOOK_FORMATS).optional(),
      template: z.string().optional(),
      content_type: z
        .string()
        .regex(/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/, 'must be a media type such as text/plain')
        .optional(),
      events: z.array(z.enum(HOOK_EVENTS)).optional(),
      match: match.optional(),
      decision_links: z.boolean().optional(),
      include_content: z.boolean().optional(),
      secret_env: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
        .optional(),
      timeout: timeout.optional(),
    })
    .superRefine((h, ctx) => {
      const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
      if ((h.webhook === undefined) === (h.exec === undefined)) {
        issue(h.webhook === undefined ? 'webhook' : 'exec', 'give exactly one of webhook and exec');
        return;
      }
      if (h.webhook !== undefined) {
        const bad = checkHttpUrl(h.webhook);
        if (bad) issue('webhook', bad);
        else if (h.format === 'ntfy' && new URL(h.webhook).pathname.replace(/\/+$/, '').split('/').pop() === '') {
          issue('webhook', 'an ntfy hook needs the topic in the URL, e.g. https://ntfy.sh/my-topic');
        }
      } else {
        for (const key of ['format', 'template', 'content_type', 'secret_env'] as const) {
          if (h[key] !== undefined) issue(key, 'is for webhook hooks only (an exec hook gets the JSON envelope on stdin)');
        }
      }
      if (h.format === 'template') {
        if (h.template === undefined) issue('template', 'is required with format: template');
        else {
          try {
            Mustache.parse(h.template);
          } catch (err) {
            issue('template', `is not a valid template: ${(err as Error).message}`);
          }
        }
      } else {
        if (h.template !== undefined) issue('template', 'is only used with format: template');
        if (h.content_type !== undefined) issue('content_type', 'is only used with format: template');
      }
    });
}

export const HookSchema = hookSchema(RuleMatchSchema);

export type HookConfig = z.infer<typeof HookSchema> & {
  /** The value of `secret_env`, read at start (never from the file itself). */
  secret?: string | null;
};

export const NotificationsSchema = z.strictObject({
  // "none" (the default) sends no reminders.
  remind_every: durationSchema({ example: '15m', none: true }),
  expiring_before: durationSchema({ example: '5m', none: true }),
  burst: z.strictObject({
    window: duration,
    max: z.preprocess((v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v), z.number().int().min(0)),
  }),
  decision_links: z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean()),
  links_per_minute: z.preprocess((v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v), z.number().int().positive()),
});

/** `public_url`: where people reach this daemon (absolute http(s), no query or fragment). */
export const PublicUrlSchema = z
  .string()
  .superRefine((s, ctx) => {
    const bad = checkHttpUrl(s);
    if (bad) return ctx.addIssue({ code: 'custom', message: bad });
    const url = new URL(s);
    if (url.search) ctx.addIssue({ code: 'custom', message: 'must not contain a query' });
    // The inbox loads its page, scripts and API from the root: under a path none of it is found.
    else if (url.pathname !== '/') ctx.addIssue({ code: 'custom', message: 'must not contain a path: countersign is served from the root of its host' });
  })
  .transform((s) => s.replace(/\/+$/, ''))
  .nullable();

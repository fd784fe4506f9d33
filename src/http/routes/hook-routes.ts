import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { AppError } from '../../lib/errors.js';
import { HOOK_EVENTS, issuesLinks, type HookConfig } from '../../notify/hook-config.js';
import { describeHookTarget } from '../../notify/hook-render.js';
import { limitParam } from '../schemas.js';
import { errors } from '../openapi.js';
import { DeliveryDoc } from './delivery-routes.js';

const HookParams = z.strictObject({ name: z.string().min(1).max(64) });

const HookDoc = z.object({
  name: z.string(),
  kind: z.enum(['webhook', 'exec']),
  target: z.string().describe('A webhook origin (its path may carry a secret) or the program run'),
  format: z.string(),
  events: z.array(z.string()),
  match: z.looseObject({}).nullable(),
  decision_links: z.boolean(),
  include_content: z.boolean(),
  signed: z.boolean(),
  last_delivery: DeliveryDoc.nullable(),
});

const TestResultDoc = z.object({
  hook: z.string(),
  id: z.string(),
  type: z.string(),
  ok: z.boolean(),
  status: z.number().int().nullable().describe("HTTP status, or an exec hook program's exit status"),
  latency_ms: z.number().int(),
  error_class: z.string().nullable(),
  error: z.string().nullable(),
});

/** `decision_links`: whether its messages carry links now (the hook's flag, `notifications.decision_links` and `public_url`). */
function describe(h: HookConfig, config: Deps['config']) {
  return {
    name: h.name,
    kind: h.exec ? ('exec' as const) : ('webhook' as const),
    target: describeHookTarget(h),
    format: h.exec ? 'json' : (h.format ?? 'json'),
    events: [...(h.events ?? HOOK_EVENTS)],
    match: h.match ?? null,
    decision_links: issuesLinks(config, h),
    include_content: h.include_content ?? false,
    signed: Boolean(h.secret),
  };
}

/** Event hooks: listed with their last delivery, their deliveries, a test send. Admin only. */
export function registerHookRoutes(app: FastifyInstance, deps: Deps) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const hookOr404 = (name: string) => {
    const hook = deps.notifier.hook(name);
    if (!hook) throw new AppError('not_found', `hook ${name} not found`);
    return hook;
  };

  r.get('/v1/hooks', { schema: { summary: 'Configured hooks, each with its last delivery', response: { 200: z.array(HookDoc) } } }, async () =>
    Promise.all(
      deps.notifier.hooks().map(async (h) => ({ ...describe(h, deps.config), last_delivery: (await deps.store.deliveries.listForHook(h.name, 1))[0] ?? null })),
    ),
  );

  r.get(
    '/v1/hooks/:name/deliveries',
    {
      schema: {
        summary: "A hook's deliveries, newest first, each with its attempts",
        params: HookParams,
        querystring: z.strictObject({ limit: limitParam(50, 500) }),
        response: { 200: z.array(DeliveryDoc), ...errors('not_found') },
      },
    },
    async (request) => {
      hookOr404(request.params.name);
      return deps.store.deliveries.listForHook(request.params.name, request.query.limit);
    },
  );

  r.post(
    '/v1/hooks/:name/test',
    {
      config: { optionalBody: true },
      schema: {
        summary: 'Send a sample event to a hook now (one attempt, not queued) and answer with its result',
        params: HookParams,
        // Absent (no body at all reads as null), empty or `{}`: a created event.
        body: z.strictObject({ event: z.enum(HOOK_EVENTS).optional() }).nullish(),
        response: { 200: TestResultDoc, ...errors('invalid_request', 'not_found') },
      },
    },
    async (request) => {
      const hook = hookOr404(request.params.name);
      const now = deps.clock.now();
      // Made here if no notification has needed it yet, so a first test already shows the links.
      const key = issuesLinks(deps.config, hook) ? await deps.store.write((tx) => deps.notifier.linkKey(tx, now)) : null;
      const message = deps.notifier.sample(hook.name, request.body?.event ?? 'request.created', now, key)!;
      const { outcome, latencyMs } = await deps.hookSender.send(hook, message, new AbortController());
      const ok = outcome.kind === 'delivered';
      return {
        hook: hook.name,
        id: message.id,
        type: message.type,
        ok,
        status: outcome.kind === 'interrupted' ? null : outcome.status,
        latency_ms: Math.round(latencyMs),
        error_class: ok || outcome.kind === 'interrupted' ? null : (outcome as { errorClass: string }).errorClass,
        error: ok ? null : outcome.error,
      };
    },
  );
}

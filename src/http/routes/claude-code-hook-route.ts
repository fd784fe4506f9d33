import { clientGone } from '../client-gone.js';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ClaudeCodeHookSchema, FORMAT, hookOutput, isAskingEvent } from '../../adapters/claude-code.js';
import { admitter } from '../../auth/rate-limit.js';
import type { Deps } from '../../deps.js';
import { stillAuthenticated } from '../still-authenticated.js';
import { durationMs } from '../../lib/durations.js';
import { durationParam } from '../schemas.js';
import { AppError, validationError } from '../../lib/errors.js';
import { OnTimeoutSchema, TimeoutTextSchema } from '../../requests/request-schema.js';
import { errors } from '../openapi.js';

/** How long a hook call waits for the decision unless it says otherwise. */
export const HOOK_WAIT_DEFAULT_MS = 55_000;
/** The longest a hook call is held (docs/formats/claude-code.md); longer asks are capped. */
export const HOOK_WAIT_MAX_MS = 10 * 60_000;

const HookQuery = z.strictObject({
  wait: durationParam.optional(),
  on_wait: z.enum(['ask', 'deny']).optional(),
  timeout: TimeoutTextSchema.optional(),
  on_timeout: OnTimeoutSchema.optional(),
  callback_url: z.string().min(1).max(2048).optional(),
  repo: z.string().min(1).max(1024).optional(),
  branch: z.string().min(1).max(1024).optional(),
});

const HookOutputDoc = z
  .looseObject({ hookSpecificOutput: z.looseObject({ hookEventName: z.string() }).optional() })
  .describe("Claude Code's hook output: PreToolUse permissionDecision allow / deny / ask, PermissionRequest decision.behavior allow / deny, or {}");

/**
 * `POST /v1/formats/claude-code/hook` (docs/formats/claude-code.md): Claude Code's hook JSON in, its hook output
 * out, held until the request ends or `wait` runs out. The same URL takes the follow-up hooks
 * (PostToolUse, PostToolUseFailure, PermissionDenied, SessionEnd) and answers them `{}`, so one
 * hook URL serves every event. Whatever the hook answers, the request stays in countersign: a
 * later decision still reaches history and callbacks.
 */
// Parsed in the handler (an unknown event is answered {}), so documented only.
const HookInputDoc = z
  .record(z.string(), z.unknown())
  .meta({ id: 'ClaudeCodeHookInput', description: "Claude Code's hook input (stdin of a command hook), with hook_event_name" });

export function registerClaudeCodeHookRoute(app: FastifyInstance, deps: Deps) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { formats, intake, requests, waiters, rateLimit } = deps;

  r.post(
    `/v1/formats/${FORMAT}/hook`,
    {
      config: { auth: 'submit', validationCode: 'invalid_frame', ownQuery: true, openapi: { body: HookInputDoc } },
      schema: {
        summary: 'Claude Code hook (PreToolUse, PermissionRequest): answers the hook output once decided or when ?wait (default 55s, max 10m) runs out',
        description:
          'Query: wait, on_wait (ask | deny: what a still-pending request answers), timeout, on_timeout, callback_url, repo, branch. Follow-up hooks (PostToolUse, PostToolUseFailure, PermissionDenied, SessionEnd) are applied and answered {}.',
        response: {
          200: HookOutputDoc,
          ...errors('invalid_frame', 'invalid_query', 'callback_not_allowed', 'forbidden', 'native_conflict', 'unsupported_frame', 'rate_limited'),
        },
      },
    },
    async (request, reply) => {
      const query = HookQuery.safeParse(request.query ?? {});
      if (!query.success) throw validationError('invalid_query', query.error.issues, 'query');
      const { wait, on_wait: onWait = 'ask', repo, branch, ...overrides } = query.data;
      const parsed = ClaudeCodeHookSchema.safeParse(request.body);
      if (!parsed.success) throw validationError('invalid_frame', parsed.error.issues);
      const hook = parsed.data;
      const adapter = formats.native(FORMAT);
      const principal = request.principal;

      if (!isAskingEvent(hook.hook_event_name)) {
        const asked = await intake.readFollowUp(adapter, request.body, {}, principal);
        try {
          await intake.applyFollowUp(adapter, asked, principal);
        } catch (err) {
          // A tool call countersign never saw (another matcher, an allow rule in Claude Code): nothing to end.
          if (!(err instanceof AppError && err.code === 'not_found')) throw err;
        }
        return {};
      }

      // Without repo or branch here, the intake reads the git work tree at cwd.
      const context: Record<string, string> = { ...(repo !== undefined ? { repo } : {}), ...(branch !== undefined ? { branch } : {}) };
      const { stored } = await intake.submit(adapter, request.body, {
        principal,
        overrides,
        context,
        admit: admitter(rateLimit, principal),
      });
      const id = stored.record.id;
      const waitMs = wait === undefined ? HOOK_WAIT_DEFAULT_MS : Math.min(durationMs(wait), HOOK_WAIT_MAX_MS);
      const record =
        stored.record.status === 'pending'
          ? await waiters.wait(id, waitMs, async () => (await requests.get(id, principal)).record, clientGone(reply))
          : stored.record;
      if (record !== stored.record) await stillAuthenticated(deps, request)();
      return hookOutput(record, hook.hook_event_name, hook.tool_input ?? {}, onWait);
    },
  );
}

import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { classifyError, TIMEOUT } from '../callbacks/attempt-errors.js';
import { classifyStatus, type AttemptOutcome } from '../callbacks/retry-policy.js';
import { DELIVERY_SLOTS } from '../callbacks/delivery-slots.js';
import { webhookHeaders } from '../callbacks/webhook-signature.js';
import type { Clock } from '../lib/clock.js';
import { durationMs } from '../lib/durations.js';
import { runExecHook } from './exec-hook.js';
import type { HookConfig } from './hook-config.js';
import { hookContentType, hookPostUrl } from './hook-render.js';

const EXEC_TIMEOUT_MS = 30_000;
const RESPONSE_DRAIN_LIMIT = 64 * 1024;

export interface HookMessage {
  /** The event id, sent as `webhook-id` (stable across retries). */
  id: string;
  type: string;
  requestId: string;
  body: string;
}

export interface HookSenderDeps {
  clock: Clock;
  userAgent: string;
  /** The webhook timeout when a hook sets none (callbacks.timeout). */
  defaultTimeoutMs: number;
  /** The environment exec hook programs run with (the daemon's, less its secrets). */
  env: Record<string, string>;
  monotonic?: () => number;
}

/**
 * Makes one attempt of one hook message: POSTs the body to the hook's URL (signed like
 * callbacks when it has `secret_env`), or runs its program with the body on stdin. Used by the
 * delivery worker for outbox rows and by `POST /v1/hooks/{name}/test`.
 */
export function createHookSender({ clock, userAgent, defaultTimeoutMs, env, monotonic = () => performance.now() }: HookSenderDeps) {
  // Hook URLs are written by the operator and trusted: no allowlist or address
  // checks. Like callbacks, redirects are never followed (undici's request does not follow them).
  // As many connections per host as the delivery worker may have hook messages in flight: messages
  // of different hooks on one host (several Slack webhooks, ntfy topics) never queue in the agent
  // behind another hook's hanging requests.
  const agent = new Agent({ headersTimeout: defaultTimeoutMs, bodyTimeout: defaultTimeoutMs, connections: DELIVERY_SLOTS });
  const timeoutOf = (h: HookConfig) => (h.timeout ? durationMs(h.timeout) : h.exec ? EXEC_TIMEOUT_MS : defaultTimeoutMs);

  async function send(hook: HookConfig, m: HookMessage, controller: AbortController): Promise<{ outcome: AttemptOutcome; latencyMs: number }> {
    const started = monotonic();
    const limit = timeoutOf(hook);
    if (hook.exec) {
      const childEnv = { ...env, COUNTERSIGN_HOOK: hook.name, COUNTERSIGN_EVENT: m.type, COUNTERSIGN_EVENT_ID: m.id, COUNTERSIGN_REQUEST_ID: m.requestId };
      const outcome = await runExecHook({ argv: hook.exec, stdin: m.body, env: childEnv, timeoutMs: limit, signal: controller.signal });
      return { outcome, latencyMs: monotonic() - started };
    }
    const headers = {
      'content-type': hookContentType(hook),
      'user-agent': userAgent,
      ...webhookHeaders({ secret: hook.secret ?? null, id: m.id, timestampSec: Math.floor(clock.now() / 1000), body: m.body }),
    };
    const deadline = clock.setTimer(() => controller.abort(TIMEOUT), limit);
    try {
      const res = await request(hookPostUrl(hook), {
        method: 'POST',
        headers,
        body: m.body,
        dispatcher: agent,
        signal: controller.signal,
        // The hook's own limit, which may be longer than the agent's default.
        headersTimeout: limit,
        bodyTimeout: limit,
      });
      const latencyMs = monotonic() - started;
      const retryAfter = res.headers['retry-after'];
      const outcome = classifyStatus(res.statusCode, Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, clock.now());
      // The receiver's body is never read or stored; drain a little so the socket can be reused.
      await res.body.dump({ limit: RESPONSE_DRAIN_LIMIT }).catch(() => undefined);
      return { outcome, latencyMs };
    } catch (err) {
      // The limit that ran out: the hook's own `timeout`, else callbacks.timeout.
      const timeoutKey = hook.timeout ? `the hook's timeout (${hook.timeout})` : 'callbacks.timeout';
      return { outcome: classifyError(err, controller.signal, timeoutKey), latencyMs: monotonic() - started };
    } finally {
      clock.clearTimer(deadline);
    }
  }

  return {
    send,
    /** The longest one attempt of `hook` may take. */
    timeoutOf,
    close: () => agent.destroy(),
  };
}

export type HookSender = ReturnType<typeof createHookSender>;

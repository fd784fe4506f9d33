import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ReplyEnv } from '../adapters/adapter.js';
import { newId } from '../lib/ids.js';
import type { TerminalHook } from '../requests/request-hooks.js';
import { HANDUP_FORMAT, type FormatCatalog } from './format-catalog.js';
import { isUpstreamActor } from './upstream-decision.js';

/** The persistent counter behind `ReplyEnv.rpcId()` (JSON-RPC ids of Ask and ALP replies). */
export const RPC_ID_COUNTER = 'native_rpc_id';
/** Audit actor of the rows this hook writes. */
export const REPLY_ACTOR = 'countersign';

export interface NativeReplyHookDeps {
  formats: Pick<FormatCatalog, 'get'>;
  log: Logger;
}

// Thrown by ReplyEnv.rpcId() before the counter has been read: adapters are synchronous and
// pure, the counter lives in the store, so a render that needs an id is redone with one.
const NEEDS_RPC_ID = Symbol('needs an rpc id');

/**
 * Renders the native reply of a native-format request once, inside its terminal transaction,
 * and leaves it on `stored.nativeReply` for the service to persist (and later hooks to read).
 *
 * - A request made without a native frame (handup, MCP tools) gets no reply.
 * - A request resolved by a follow-up frame gets no reply: the upstream resolved it already,
 *   and answering would resolve it a second time.
 * - Feedback the rendered reply does not carry is written to the audit log
 *   (`reply.feedback_not_sent`), never silently dropped (docs/formats/README.md).
 * - An adapter that throws must not block the transition (an expiry sweep would retry the
 *   same request forever): the request ends with no reply and a `reply.render_failed` row.
 */
export function createNativeReplyHook({ formats, log }: NativeReplyHookDeps): TerminalHook {
  return async ({ stored, at, actor }, tx) => {
    // A request that came without a native frame (handup, MCP) has nothing to reply to.
    if (stored.format === HANDUP_FORMAT || stored.nativeKey === null || isUpstreamActor(actor)) return;
    const { id } = stored.record;
    const adapter = formats.get(stored.format);
    if (!adapter) {
      await tx.requests.appendAudit(id, 'reply.render_failed', REPLY_ACTOR, at, { format: stored.format, error: 'no adapter serves this format' });
      return;
    }
    let rpcId: number | undefined;
    const env: ReplyEnv = {
      now: at,
      uuid: () => randomUUID(),
      ulid: () => newId(at),
      rpcId: () => {
        if (rpcId === undefined) throw NEEDS_RPC_ID;
        return rpcId;
      },
    };
    const render = () => adapter.renderReply(stored.record, stored.nativeContext, env) ?? null;
    let reply: unknown;
    try {
      try {
        reply = render();
      } catch (err) {
        if (err !== NEEDS_RPC_ID) throw err;
        rpcId = await tx.counters.next(RPC_ID_COUNTER);
        reply = render();
      }
    } catch (err) {
      log.error({ err, id, format: stored.format }, 'rendering the native reply failed');
      await tx.requests.appendAudit(id, 'reply.render_failed', REPLY_ACTOR, at, { format: stored.format, error: String((err as Error)?.message ?? err) });
      return;
    }
    stored.nativeReply = reply;
    const feedback = stored.record.decision?.feedback?.trim();
    if (feedback && !carriesText(reply, feedback)) {
      await tx.requests.appendAudit(id, 'reply.feedback_not_sent', REPLY_ACTOR, at, { format: stored.format, feedback: stored.record.decision!.feedback });
    }
  };
}

/** Whether some string inside `value` contains `text` (feedback may be quoted or prefixed). */
function carriesText(value: unknown, text: string): boolean {
  if (typeof value === 'string') return value.includes(text);
  if (Array.isArray(value)) return value.some((v) => carriesText(v, text));
  if (value !== null && typeof value === 'object') return Object.values(value).some((v) => carriesText(v, text));
  return false;
}

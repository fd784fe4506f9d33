import type { TerminalTransition } from '../requests/request-hooks.js';

/**
 * The callback body (docs/callbacks.md), serialised once when the outbox row is written and sent
 * byte for byte on every attempt, so signatures and receivers' dedupe see the same payload:
 * `{"v":1,"type","id","time","data":{"request","decision"}}`, plus `format` and `reply` (the
 * native reply rendered by the reply hook) for requests that came in a native format.
 */
export function buildCallbackBody(transition: TerminalTransition, deliveryId: string): string {
  const { stored, type, at } = transition;
  const body: Record<string, unknown> = {
    v: 1,
    type,
    id: deliveryId,
    time: new Date(at).toISOString(),
    data: { request: stored.record, decision: stored.record.decision },
  };
  if (stored.format !== 'handup') {
    body.format = stored.format;
    body.reply = stored.nativeReply ?? null;
  }
  return JSON.stringify(body);
}

import { newId } from '../lib/ids.js';
import type { TerminalHook } from '../requests/request-hooks.js';
import { buildCallbackBody } from './callback-body.js';

/**
 * The outbox write (docs/callbacks.md): for a request with a `callback_url`, one delivery row per
 * terminal transition, inside the transition's own transaction, so a committed decision always
 * has its delivery and a rolled-back one never does. Register it after the reply hook: native
 * requests carry the reply that hook renders.
 */
export function createCallbackOutboxHook(): TerminalHook {
  return async (transition, tx) => {
    const url = transition.stored.record.callback_url;
    if (!url) return;
    // Made now: a delivery's age (callbacks.max_age) counts from when it was queued.
    const id = newId(transition.now);
    await tx.deliveries.insert({
      id,
      requestId: transition.stored.record.id,
      type: transition.type,
      url,
      body: buildCallbackBody(transition, id),
      createdAt: transition.now,
    });
  };
}

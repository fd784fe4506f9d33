import { z } from 'zod';
import type { FollowUp } from '../adapter.js';
import { EVENT, flag, keyOf, requestId } from './common.js';
import { outcomeOfKey } from './legacy.js';

/** PRP events that settle a runtime request elsewhere: resolved, cancelled, expired (docs/formats/paperclip.md). */

const TERMINAL_EVENTS = ['runtime_request.resolved', 'runtime_request.cancelled', 'runtime_request.expired'];

export const FollowUpSchema = z
  .looseObject({
    schema: z.literal(EVENT),
    eventType: z.string().min(1),
    runId: z.string().min(1).max(160),
    payload: z.looseObject({ requestId: requestId.optional(), action: z.string().min(1).optional() }),
  })
  .superRefine((e, ctx) => {
    if (TERMINAL_EVENTS.includes(e.eventType) && !e.payload.requestId) {
      flag(ctx, ['payload', 'requestId'], `${e.eventType} needs the requestId it settles`);
    }
  });
export type PaperclipFollowUp = z.infer<typeof FollowUpSchema>;

export function followUp(frame: PaperclipFollowUp): FollowUp {
  if (!TERMINAL_EVENTS.includes(frame.eventType)) {
    return { kind: 'ignored', reason: `eventType "${frame.eventType}" does not settle a runtime request` };
  }
  const requestId = frame.payload.requestId!;
  // Events always name the run; the request may have come bare, without it (key `paperclip:-:…`).
  const key = { nativeKey: keyOf(frame.runId, requestId), fallbackKeys: [keyOf(null, requestId)] };
  if (frame.eventType === 'runtime_request.cancelled') return { kind: 'resolve', ...key, status: 'cancelled' };
  if (frame.eventType === 'runtime_request.expired') return { kind: 'resolve', ...key, status: 'expired' };
  const action = frame.payload.action;
  if (!action) return { kind: 'ignored', reason: 'runtime_request.resolved without an action does not say how it was settled' };
  if (action === 'submit') return { kind: 'resolve', ...key, status: 'answered', option: 'submit' };
  return { kind: 'resolve', ...key, status: outcomeOfKey(action) === 'approve' ? 'approved' : 'denied', option: action };
}

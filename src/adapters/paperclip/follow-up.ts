import { z } from 'zod';
import { AppError } from '../../lib/errors.js';
import type { HandupRequest } from '../../requests/request-schema.js';
import type { FollowUp, FollowUpTarget, FrameContext } from '../adapter.js';
import { nativeIdOf, type NativeIds } from '../adapter-kit.js';
import { EVENT, flag, keyOf, requestId } from './common.js';
import { outcomeOfKey } from './legacy.js';
import { answersFromResolution, type RuntimeForm } from './runtime.js';

/** PRP events that settle a runtime request elsewhere: resolved, cancelled, expired (docs/formats/paperclip.md). */

const TERMINAL_EVENTS = ['runtime_request.resolved', 'runtime_request.cancelled', 'runtime_request.expired'];

export const FollowUpSchema = z
  .looseObject({
    schema: z.literal(EVENT),
    eventType: z.string().min(1),
    runId: z.string().min(1).max(160),
    payload: z.looseObject({ requestId: requestId.optional(), action: z.string().min(1).optional(), reason: z.string().max(65_536).optional() }),
  })
  .superRefine((e, ctx) => {
    if (TERMINAL_EVENTS.includes(e.eventType) && !e.payload.requestId) {
      flag(ctx, ['payload', 'requestId'], `${e.eventType} needs the requestId it settles`);
    }
  });
export type PaperclipFollowUp = z.infer<typeof FollowUpSchema>;

/** PRP's resolution actions (`request.resolve`): what `runtime_request.resolved` reports. */
const APPROVING = new Set(['accept', 'accept_for_session']);
const REFUSING = new Set(['decline', 'cancel']);

export function followUp(frame: PaperclipFollowUp, _ctx?: FrameContext, stored?: FollowUpTarget): FollowUp {
  if (!TERMINAL_EVENTS.includes(frame.eventType)) {
    return { kind: 'ignored', reason: `eventType "${frame.eventType}" does not settle a runtime request` };
  }
  const requestId = frame.payload.requestId!;
  // Events always name the run; the request may have come bare, without it (key `paperclip:-:…`).
  // The runner's reason (`browser_reconnect`, `provider_exit`, …) has no field in the record; it reaches the audit row.
  const reason = frame.payload.reason?.trim() ? { feedback: frame.payload.reason } : {};
  const key = { nativeKey: keyOf(frame.runId, requestId), fallbackKeys: [keyOf(null, requestId)], ...reason };
  if (frame.eventType === 'runtime_request.cancelled') return { kind: 'resolve', ...key, status: 'cancelled' };
  if (frame.eventType === 'runtime_request.expired') return { kind: 'resolve', ...key, status: 'expired' };
  const action = frame.payload.action;
  if (!action) return { kind: 'ignored', reason: 'runtime_request.resolved without an action does not say how it was settled' };
  if (!stored)
    return { kind: 'resolve', ...key, status: action === 'submit' ? 'answered' : outcomeOfKey(action) === 'approve' ? 'approved' : 'denied', option: action };
  const context = stored.context as { nativeIds?: NativeIds; form?: RuntimeForm } | null;
  const settled = settledBy(action, stored.record, context?.nativeIds?.options);
  // A form answered upstream: its answers are the decision's, as a reviewer's would be.
  const asked = new Set(((stored.record.input as { questions?: Array<{ id: string }> } | null)?.questions ?? []).map((q) => q.id));
  const answers =
    settled.status === 'answered' && context?.form ? answersFromResolution(context.form, frame.payload, context.nativeIds?.questions, asked) : null;
  return { kind: 'resolve', ...key, ...settled, ...(answers ? { fields: { answers } } : {}) };
}

/**
 * What `action` did to the pending request, read against its options: one of them (a v2
 * choice key, a question set's submit/decline/cancel, a v1 key, which `optionIds` leads to the
 * record's option id), else PRP's own accept/decline words. An action the request could not
 * have taken (`submit` on a permission, `accept` on a question set, a word PRP does not have)
 * says nothing trustworthy: 400, nothing changes.
 */
function settledBy(action: string, record: HandupRequest, optionIds: NativeIds['options']): { status: 'approved' | 'denied' | 'answered'; option: string } {
  const question = record.kind === 'question';
  // The option whose native key is the action: a record id standing for another key names none.
  const option = record.options.find((o) => nativeIdOf(optionIds, o.id) === action);
  const approves = option ? option.outcome === 'approve' : !question && APPROVING.has(action) ? true : REFUSING.has(action) ? false : undefined;
  if (approves === undefined) {
    const offered = record.options.map((o) => JSON.stringify(nativeIdOf(optionIds, o.id))).join(', ');
    throw new AppError('invalid_frame', `payload.action: "${action}" cannot settle this ${question ? 'question set' : 'request'} (it offers ${offered})`);
  }
  return { status: approves ? (question ? 'answered' : 'approved') : 'denied', option: option?.id ?? action };
}

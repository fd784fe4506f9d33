import { z } from 'zod';
import { RequestNotTaken } from '../../lib/errors.js';
import type { HandupRequest } from '../../requests/request-schema.js';
import type { FollowUp, FollowUpTarget, FrameContext, Normalized, ReplyEnv, WireAdapter } from '../adapter.js';
import { RuntimeEventFrame, type ApprovalContext, approvalFollowUp, approvalReply, approvalRequest } from './approvals.js';
import { unsupported } from './common.js';
import { isCommonRollFrame } from './common-frame.js';
import {
  InteractionCancelledFrame,
  InteractionRequestFrame,
  InteractionResolvedFrame,
  checkInteractionDecision,
  interactionFollowUp,
  interactionReply,
  interactionRequest,
  type InteractionContext,
} from './interactions.js';

/**
 * Roll Relay Protocol (`@roll-agent/relay-protocol`, docs/formats/roll.md). Relay 1.0: the Companion
 * relays the Runtime's `approval.required` inside a `runtime.event` frame, answered with the
 * `runtime.request` frame a Browser would send back: `approval.respond` for Runtime 1.0,
 * `approval.candidate` from Runtime 1.1 on (approvals.ts). Relay 1.1/1.2: `interaction.request`
 * frames for approvals and user input, answered with `interaction.candidate` (interactions.ts).
 */

/** Other relay frames a bridge may pass along; they ask nothing of a reviewer. */
const OtherRelayFrame = z.looseObject({
  type: z.enum(['device.connect', 'runtime.request', 'runtime.response', 'runtime.ack', 'runtime.gap', 'runtime.encrypted']),
});

export const RollFrameSchema = z.discriminatedUnion('type', [
  RuntimeEventFrame,
  InteractionRequestFrame,
  InteractionResolvedFrame,
  InteractionCancelledFrame,
  OtherRelayFrame,
]);
export type RollFrame = z.infer<typeof RollFrameSchema>;

/** What renderReply needs: an approval of a runtime event, or a Relay 1.1+ interaction. */
export type RollContext = ApprovalContext | InteractionContext;
const isInteraction = (ctx: RollContext): ctx is InteractionContext => 'interaction' in ctx;

function normalize(frame: RollFrame): Normalized<RollContext> {
  switch (frame.type) {
    case 'runtime.event':
      return approvalRequest(frame);
    case 'interaction.request':
      return interactionRequest(frame);
    case 'runtime.encrypted':
      throw new RequestNotTaken('runtime.encrypted hides its payload: decrypt it at the bridge and send the runtime.event');
    default:
      return unsupported(`relay frame "${frame.type}" asks nothing of a reviewer`);
  }
}

function renderReply(record: HandupRequest, context: RollContext, env: ReplyEnv): unknown {
  return isInteraction(context) ? interactionReply(record, context, env) : approvalReply(record, context, env);
}

function followUp(frame: RollFrame, _ctx: FrameContext, stored?: FollowUpTarget<RollContext>): FollowUp {
  switch (frame.type) {
    case 'runtime.event':
      return approvalFollowUp(frame);
    case 'interaction.resolved':
    case 'interaction.cancelled': {
      const target = stored && isInteraction(stored.context) ? (stored as FollowUpTarget<InteractionContext>) : undefined;
      return interactionFollowUp(frame, target);
    }
    default:
      return { kind: 'ignored', reason: `relay frame "${frame.type}" changes no approval` };
  }
}

function checkDecision(record: HandupRequest, context: RollContext): void {
  if (isInteraction(context)) checkInteractionDecision(record, context);
}

export const rollAdapter = {
  format: 'roll',
  frameSchema: RollFrameSchema,
  isCommonFrame: isCommonRollFrame,
  followUpSchema: RollFrameSchema,
  // The Companion's own local deadline for an approval.
  config: { default_timeout: '5m' },
  normalize,
  renderReply,
  followUp,
  checkDecision,
} satisfies WireAdapter<RollFrame, RollContext, RollFrame>;

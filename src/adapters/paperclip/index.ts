import { z } from 'zod';
import { AppError } from '../../lib/errors.js';
import type { HandupRequest } from '../../requests/request-schema.js';
import type { Normalized, ReplyEnv, WireAdapter } from '../adapter.js';
import { CREATED, EVENT, INTERACTION, REQUEST_V1, REQUEST_V2, flag, keyOf, type Built, type Envelope } from './common.js';
import { isCommonPaperclipFrame } from './common-frame.js';
import { FollowUpSchema, followUp, type PaperclipFollowUp } from './follow-up.js';
import { InteractionSchema, checkInteractionDecision, interactionReply, issueThreadRequest, type InteractionContext } from './issue-thread.js';
import { V1ElicitationSchema, V1Schema, legacyReply, legacyRequest, v1ElicitationRequest, type LegacyContext } from './legacy.js';
import {
  DriverRequestSchema,
  V2InputSchema,
  V2PermissionSchema,
  approval,
  checkRuntimeDecision,
  driverRequest,
  questionSetRequest,
  runtimeReply,
  sequenceCommand,
  type RuntimeContext,
} from './runtime.js';

/**
 * PaperClip Runner Protocol (docs/formats/paperclip.md). Runtime requests (v2 permission approvals, v2
 * question sets, driver-level requests) are answered with a `paperclip.prp.command.v1`
 * `request.resolve` command (runtime.ts); v1 requests in the legacy `{requestId, response}` shape
 * (legacy.ts); issue-thread interactions with the body PaperClip's interaction routes take
 * (issue-thread.ts). This entry reads the frame and its PRP event envelope and dispatches.
 */

const requestOptions = [
  z.discriminatedUnion('requestKind', [V2PermissionSchema, V2InputSchema]),
  z.discriminatedUnion('requestKind', [V1Schema, V1ElicitationSchema]),
  InteractionSchema,
] as const;
const noMatch = (message: string) => (issue: { code?: string; note?: string }) => (issue.code === 'invalid_union' && issue.note ? message : undefined);

const EventRequestSchema = z.discriminatedUnion('schema', [...requestOptions, DriverRequestSchema], {
  error: noMatch(`must be "${REQUEST_V2}", "${REQUEST_V1}" or "${INTERACTION}", or absent for a driver request`),
});
type PrpRequest = z.infer<typeof EventRequestSchema>;

/** The PRP event envelope; only `runtime_request.created` carries a request. */
const EventSchema = z
  .looseObject({
    schema: z.literal(EVENT),
    eventType: z.string().min(1),
    runId: z.string().min(1).max(160),
    normalizedSessionId: z.string().min(1).max(160).optional(),
    turnId: z.string().min(1).max(160).optional(),
    payload: z.looseObject({ request: EventRequestSchema.optional() }),
  })
  .superRefine((e, ctx) => {
    if (e.eventType === CREATED && !e.payload.request) flag(ctx, ['payload', 'request'], `${CREATED} needs a request`);
  });

const FrameSchema = z.discriminatedUnion('schema', [EventSchema, ...requestOptions], {
  error: noMatch(`must be "${EVENT}", "${REQUEST_V2}", "${REQUEST_V1}" or "${INTERACTION}"`),
});
type PaperclipFrame = z.infer<typeof FrameSchema>;

/** What renderReply needs, by the reply family that answers the request. */
type PaperclipContext = RuntimeContext | LegacyContext | InteractionContext;

// ---- Frame → handup Request ----

function normalize(frame: PaperclipFrame): Normalized<PaperclipContext> {
  if (frame.schema !== EVENT) return normalizeRequest(frame, { runId: null, session: null, turnId: null });
  if (frame.eventType !== CREATED || !frame.payload.request) {
    throw new AppError('unsupported_frame', `eventType "${frame.eventType}" asks nothing of a reviewer; only ${CREATED} carries a request`);
  }
  return normalizeRequest(frame.payload.request, {
    runId: frame.runId,
    session: frame.normalizedSessionId ?? frame.runId,
    turnId: frame.turnId ?? null,
  });
}

function normalizeRequest(request: PrpRequest, env: Envelope): Normalized<PaperclipContext> {
  if ('status' in request && request.status !== undefined && request.status !== 'pending') {
    throw new AppError('unsupported_frame', `status "${request.status}": the request is no longer pending, so there is nothing to decide`);
  }
  const built = buildRequest(request, env);
  const nativeKey = keyOf(env.runId, request.requestId);
  return { ...built, request: { ...built.request, dedupe_key: nativeKey }, nativeKey };
}

function buildRequest(r: PrpRequest, env: Envelope): Built<PaperclipContext> {
  if (r.schema === REQUEST_V2 && r.requestKind === 'permission_approval') {
    return approval(r, env, r.choices, true, r.turnId);
  }
  if (r.schema === REQUEST_V2) {
    return questionSetRequest(r.prompt, r.input, r, env, r.turnId ?? env.turnId, 'paperclip.runtime_request.v2 input');
  }
  if (r.schema === REQUEST_V1) return r.requestKind === 'elicitation' ? v1ElicitationRequest(r, env) : legacyRequest(r, env);
  if (r.schema === INTERACTION) return issueThreadRequest(r, env);
  return driverRequest(r, env);
}

// ---- handup decision → native reply ----

function renderReply(record: HandupRequest, ctx: PaperclipContext, env: ReplyEnv): unknown {
  switch (ctx.reply) {
    case 'runtime':
      return runtimeReply(record, ctx, env);
    case 'legacy':
      return legacyReply(record, ctx);
    case 'interaction':
      return interactionReply(record, ctx);
  }
}

function checkDecision(record: HandupRequest, ctx: PaperclipContext): void {
  if (ctx.reply === 'runtime') checkRuntimeDecision(record, ctx);
  else if (ctx.reply === 'interaction') checkInteractionDecision(record, ctx);
}

/**
 * What a replay must repeat: the whole context, but for what later versions began to keep that
 * the content hash covers already (an item verdicts' `requireReasonOn` is in its questions' text,
 * a checkbox confirmation's bounds in its heading), so a frame a bridge re-sends after an upgrade
 * still finds the record an earlier version stored for it.
 */
function replayContext(ctx: PaperclipContext): unknown {
  if (ctx.reply !== 'interaction') return ctx;
  if (ctx.kind === 'request_item_verdicts') {
    const { reasonOn: _reasonOn, ...asked } = ctx;
    return asked;
  }
  if (ctx.kind === 'request_checkbox_confirmation') {
    const { min: _min, max: _max, ...asked } = ctx;
    return asked;
  }
  return ctx;
}

export const paperclipAdapter = {
  format: 'paperclip',
  frameSchema: FrameSchema,
  isCommonFrame: isCommonPaperclipFrame,
  followUpSchema: FollowUpSchema,
  isRequestFrame: (frame: unknown) => {
    const f = frame as { schema?: unknown; eventType?: unknown } | null;
    return f?.schema !== EVENT || f.eventType === CREATED;
  },
  normalize,
  renderReply,
  followUp,
  checkDecision,
  replayContext,
  sequenceReply: sequenceCommand,
  grantsSession: (ctx: PaperclipContext) => ctx.reply === 'runtime' && ctx.sessionChoice,
} satisfies WireAdapter<PaperclipFrame, PaperclipContext, PaperclipFollowUp>;

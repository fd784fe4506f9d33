import { z } from 'zod';
import { AppError } from '../../lib/errors.js';
import type { CreateRequestBody, HandupRequest } from '../../requests/request-schema.js';
import type { FollowUp, Normalized, ReplyEnv } from '../adapter.js';
import { asTitle, toolTitle, toolKind } from '../adapter-kit.js';
import { APPROVE_DENY, dateTime, nativeKey, relayRequest, sequence, unsupported, uuid } from './common.js';

/**
 * Runtime approvals inside `runtime.event` frames (Relay 1.0, docs/formats/roll.md): `approval.required`
 * in its full Runtime form or the Runtime 1.1 projection, answered with `approval.respond`
 * (Runtime 1.0) or `approval.candidate` (Runtime 1.1 on, which refuses approval.respond).
 */

// Runtime 1.0's full approval {id, turnId, agentName, toolName, preview, reason?}, or Runtime
// 1.1's projection {approvalId, agentName, toolName, explanation?}: one closed object, told
// apart by `approvalId`, so a missing or malformed field is named by its own path.
const FULL = ['id', 'turnId', 'preview'] as const;
const FULL_ONLY = [...FULL, 'reason'] as const;
const Approval = z
  .strictObject({
    id: uuid.optional(),
    approvalId: uuid.optional(),
    turnId: uuid.optional(),
    agentName: z.string().min(1),
    toolName: z.string().min(1),
    // Any JSON value. Frames reach adapters only through the daemon's JSON parser, so every
    // value already is one; zod's JSON schema would walk the preview again (a third of the frame's cost).
    preview: z.unknown().optional(),
    reason: z.string().optional(),
    explanation: z.string().trim().min(1).max(100).optional(),
  })
  .superRefine((a, ctx) => {
    const issue = (key: string, message: string) => ctx.addIssue({ code: 'custom', path: [key], message });
    if (a.approvalId !== undefined) {
      for (const key of FULL_ONLY) if (key in a) issue(key, 'not part of the Runtime 1.1 projection (it has approvalId)');
    } else {
      for (const key of FULL) if (!(key in a)) issue(key, 'required');
      if ('explanation' in a) issue('explanation', 'only in the Runtime 1.1 projection (with approvalId); the full form carries preview');
    }
  });
type Approval = z.infer<typeof Approval>;

const ApprovalRequired = z.strictObject({ type: z.literal('approval.required'), approval: Approval });

const ApprovalResolved = z.strictObject({
  type: z.literal('approval.resolved'),
  approvalId: uuid,
  resolution: z.discriminatedUnion('status', [
    z.discriminatedUnion('decision', [
      z.strictObject({ status: z.literal('resolved'), decision: z.literal('approve') }),
      z.strictObject({ status: z.literal('resolved'), decision: z.literal('reject'), reason: z.string().min(1).optional() }),
    ]),
    // The schema requires a cancel's reason (Runtime 1.0 and 1.1 alike), not an expiry's.
    z.strictObject({ status: z.literal('cancelled'), reason: z.string().min(1) }),
    z.strictObject({ status: z.literal('expired'), reason: z.string().min(1).optional() }),
  ]),
});

/** The rest of Runtime 1.0/1.1's closed event list: well-formed, but nothing a reviewer answers. */
const QuietEvent = z.looseObject({
  type: z.enum([
    'turn.started',
    'message.started',
    'message.delta',
    'message.completed',
    'reasoning.summary.delta',
    'tool.started',
    'tool.output',
    'tool.completed',
    'turn.completed',
    'turn.cancelled',
    'turn.failed',
    'capabilities.changed',
  ]),
});

export const RuntimeEventFrame = z.strictObject({
  type: z.literal('runtime.event'),
  workspaceId: uuid,
  relaySequence: sequence,
  event: z.strictObject({
    protocolVersion: z.enum(['1.1', '1.0']),
    runtimeInstanceId: uuid,
    sequence,
    timestamp: dateTime,
    threadId: uuid,
    turnId: uuid.optional(),
    event: z.discriminatedUnion('type', [ApprovalRequired, ApprovalResolved, QuietEvent]),
  }),
});
type RuntimeEventFrame = z.infer<typeof RuntimeEventFrame>;

export interface ApprovalContext {
  workspaceId: string;
  threadId: string;
  turnId: string;
  approvalId: string;
  /** Runtime 1.1 on refuses `approval.respond` (`clientApprovalResponses: false`); absent: Runtime 1.0. */
  method?: 'approval.candidate';
}

/** `preview` is any JSON; the Companion shows its `explanation` string when there is one. */
function explanationOf(preview: unknown): string | undefined {
  if (preview === null || typeof preview !== 'object' || Array.isArray(preview)) return undefined;
  const explanation = (preview as Record<string, unknown>).explanation;
  return typeof explanation === 'string' ? explanation : undefined;
}

export function approvalRequest(frame: RuntimeEventFrame): Normalized<ApprovalContext> {
  const { threadId, event, protocolVersion } = frame.event;
  if (event.type !== 'approval.required') unsupported(`runtime event "${event.type}" asks nothing of a reviewer`);
  const a: Approval = event.approval;
  const approvalId = (a.approvalId ?? a.id)!;
  // The projection names no turn of its own: the envelope's is the approval's.
  const turnId = a.turnId ?? frame.event.turnId;
  if (turnId === undefined) {
    throw new AppError('invalid_frame', 'event.turnId: a projected approval.required (with approvalId) names no turn; the envelope must');
  }
  const explanation = a.explanation ?? explanationOf(a.preview);
  const title = asTitle(explanation) ?? asTitle(a.reason) ?? toolTitle(a.agentName, a.toolName);
  const summary = a.reason?.trim() && a.reason.trim() !== title ? a.reason : null;
  const previews: NonNullable<CreateRequestBody['previews']> =
    a.preview === undefined || a.preview === null ? [] : [{ type: 'json', title: 'Preview', inline: JSON.stringify(a.preview, null, 2) }];
  const key = nativeKey(frame.workspaceId, approvalId);
  return {
    request: {
      title,
      summary,
      tool: a.toolName,
      kind: toolKind(a.toolName),
      source: { agent: a.agentName, session: threadId },
      previews,
      options: APPROVE_DENY,
      dedupe_key: key,
    },
    nativeKey: key,
    context: {
      workspaceId: frame.workspaceId,
      threadId,
      turnId,
      approvalId,
      ...(protocolVersion === '1.0' ? {} : { method: 'approval.candidate' as const }),
    },
  };
}

/**
 * `approval.respond` / `approval.candidate` only approve or reject: Relay 1.0 has no frame that
 * withdraws an approval. So a request that ended undecided (cancelled, or expired with
 * on_timeout "expire") gets no reply, and the Companion's own deadline expires it.
 */
export function approvalReply(record: HandupRequest, context: ApprovalContext, env: ReplyEnv): unknown {
  const decision = record.decision;
  if (!decision?.outcome) return null;
  const requestId = env.uuid();
  // The schema requires a non-empty reason when there is one.
  const reason = decision.feedback?.trim() ? decision.feedback : undefined;
  const params = {
    threadId: context.threadId,
    turnId: context.turnId,
    approvalId: context.approvalId,
    decision: decision.outcome === 'approve' ? 'approve' : 'reject',
    ...(reason !== undefined ? { reason } : {}),
  };
  // approval.respond repeats the relay request id in its params; approval.candidate has none.
  if (context.method === 'approval.candidate') return relayRequest(context.workspaceId, 'approval.candidate', requestId, params);
  return relayRequest(context.workspaceId, 'approval.respond', requestId, { requestId, ...params });
}

export function approvalFollowUp(frame: RuntimeEventFrame): FollowUp {
  const event = frame.event.event;
  if (event.type !== 'approval.resolved') return { kind: 'ignored', reason: `runtime event "${event.type}" changes no approval` };
  const key = nativeKey(frame.workspaceId, event.approvalId);
  const r = event.resolution;
  // A reason the record has no field for still reaches the audit row of the resolution.
  const reason = 'reason' in r && r.reason !== undefined ? { feedback: r.reason } : {};
  if (r.status === 'cancelled') return { kind: 'resolve', nativeKey: key, status: 'cancelled', ...reason };
  if (r.status === 'expired') return { kind: 'resolve', nativeKey: key, status: 'expired', ...reason };
  return r.decision === 'approve'
    ? { kind: 'resolve', nativeKey: key, status: 'approved', option: 'approve' }
    : { kind: 'resolve', nativeKey: key, status: 'denied', option: 'deny', ...reason };
}

import { z } from 'zod';
import { AppError } from '../errors.js';
import type { CreateRequestBody, HandupRequest, Option } from '../requests/request-schema.js';
import type { FollowUp, Normalized, ReplyEnv, WireAdapter } from './adapter.js';
import { asTitle, toolKind } from './shared.js';

/**
 * Roll Relay Protocol 1.0 (`@roll-agent/relay-protocol`): the Companion relays the Runtime's
 * `approval.required` inside a `runtime.event` frame; the answer is the `runtime.request` frame
 * calling `approval.respond` that a Browser would send back through the relay.
 */

// ---- Frames, in Roll's own field names (every object of the 1.0 schema is closed) ----

/** The schema's own pattern: a version 1–8 UUID with the RFC variant, or the nil UUID. */
const UUID = /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000)$/;
const uuid = z.string().regex(UUID, 'must be a UUID');
const sequence = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

const ApprovalRequired = z.strictObject({
  type: z.literal('approval.required'),
  approval: z.strictObject({
    id: uuid,
    turnId: uuid,
    agentName: z.string().min(1),
    toolName: z.string().min(1),
    preview: z.json(),
    reason: z.string().optional(),
  }),
});

const ApprovalResolved = z.strictObject({
  type: z.literal('approval.resolved'),
  approvalId: uuid,
  resolution: z.discriminatedUnion('status', [
    z.discriminatedUnion('decision', [
      z.strictObject({ status: z.literal('resolved'), decision: z.literal('approve') }),
      z.strictObject({ status: z.literal('resolved'), decision: z.literal('reject'), reason: z.string().min(1).optional() }),
    ]),
    z.strictObject({ status: z.literal('cancelled'), reason: z.string().min(1) }),
    z.strictObject({ status: z.literal('expired'), reason: z.string().min(1).optional() }),
  ]),
});

/** The rest of Runtime 1.0/1.1's closed event list: well-formed, but nothing a reviewer answers. */
const QuietEvent = z.looseObject({
  type: z.enum([
    'turn.started', 'message.started', 'message.delta', 'message.completed', 'reasoning.summary.delta', 'tool.started',
    'tool.output', 'tool.completed', 'turn.completed', 'turn.cancelled', 'turn.failed', 'capabilities.changed',
  ]),
});

const RuntimeEventFrame = z.strictObject({
  type: z.literal('runtime.event'),
  workspaceId: uuid,
  relaySequence: sequence,
  event: z.strictObject({
    protocolVersion: z.enum(['1.1', '1.0']),
    runtimeInstanceId: uuid,
    sequence,
    timestamp: z.string(),
    threadId: uuid,
    turnId: uuid.optional(),
    event: z.discriminatedUnion('type', [ApprovalRequired, ApprovalResolved, QuietEvent]),
  }),
});

/**
 * Other relay frames a bridge may pass along: the 1.0 set, plus Relay 1.1's interaction frames,
 * which countersign does not speak yet (their answer, `interaction.candidate`, is not a 1.0 method).
 */
const OtherRelayFrame = z.looseObject({
  type: z.enum([
    'device.connect', 'runtime.request', 'runtime.response', 'runtime.ack', 'runtime.gap', 'runtime.encrypted',
    'interaction.request', 'interaction.resolved', 'interaction.cancelled',
  ]),
});

export const RollFrameSchema = z.discriminatedUnion('type', [RuntimeEventFrame, OtherRelayFrame]);
export type RollFrame = z.infer<typeof RollFrameSchema>;

// ---- Frame → handup Request ----

export interface RollContext {
  workspaceId: string;
  threadId: string;
  turnId: string;
  approvalId: string;
}

const OPTIONS: Option[] = [
  { id: 'approve', label: 'Approve', outcome: 'approve', style: 'primary' },
  { id: 'deny', label: 'Deny', outcome: 'deny', style: 'danger' },
];

/** `preview` is any JSON; the Companion shows its `explanation` string when there is one. */
function explanationOf(preview: unknown): string | undefined {
  if (preview === null || typeof preview !== 'object' || Array.isArray(preview)) return undefined;
  const explanation = (preview as Record<string, unknown>).explanation;
  return typeof explanation === 'string' ? explanation : undefined;
}

const nativeKey = (workspaceId: string, approvalId: string) => `roll:${workspaceId}:${approvalId}`;

function unsupported(what: string): never {
  throw new AppError('unsupported_frame', `${what}; countersign takes runtime.event frames carrying approval.required`);
}

function normalize(frame: RollFrame): Normalized<RollContext> {
  if (frame.type !== 'runtime.event') {
    if (frame.type === 'runtime.encrypted') unsupported('runtime.encrypted hides its payload: decrypt it at the bridge and send the runtime.event');
    if (frame.type.startsWith('interaction.')) unsupported(`Relay 1.1 ${frame.type} frames are not supported`);
    unsupported(`relay frame "${frame.type}" asks nothing of a reviewer`);
  }
  const { threadId, event } = frame.event;
  if (event.type !== 'approval.required') unsupported(`runtime event "${event.type}" asks nothing of a reviewer`);

  const { id, turnId, agentName, toolName, preview, reason } = event.approval;
  const title = asTitle(explanationOf(preview)) ?? asTitle(reason) ?? `${agentName} wants to run ${toolName}`;
  const summary = reason?.trim() && reason.trim() !== title ? reason : null;
  const previews: NonNullable<CreateRequestBody['previews']> =
    preview === null ? [] : [{ type: 'json', title: 'Preview', inline: JSON.stringify(preview, null, 2) }];
  const key = nativeKey(frame.workspaceId, id);
  return {
    request: {
      title,
      summary,
      tool: toolName,
      kind: toolKind(toolName),
      source: { agent: agentName, session: threadId },
      previews,
      options: OPTIONS,
      dedupe_key: key,
    },
    nativeKey: key,
    context: { workspaceId: frame.workspaceId, threadId, turnId, approvalId: id },
  };
}

// ---- Decided record → relay frame ----

/**
 * `approval.respond` only approves or rejects: Relay 1.0 has no frame that withdraws an approval.
 * So a request that ended undecided (cancelled, or expired with on_timeout "expire") gets no
 * reply, and the Companion's own deadline (5 minutes for 1.0 approvals) expires it.
 */
function renderReply(record: HandupRequest, context: RollContext, env: ReplyEnv): unknown {
  const decision = record.decision;
  if (!decision?.outcome) return null;
  // The relay deduplicates on (workspaceId, requestId), and approval.respond repeats the id in params.
  const requestId = env.uuid();
  // The schema requires a non-empty reason when there is one.
  const reason = decision.feedback?.trim() ? decision.feedback : undefined;
  return {
    type: 'runtime.request',
    requestId,
    workspaceId: context.workspaceId,
    method: 'approval.respond',
    params: {
      requestId,
      threadId: context.threadId,
      turnId: context.turnId,
      approvalId: context.approvalId,
      decision: decision.outcome === 'approve' ? 'approve' : 'reject',
      ...(reason !== undefined ? { reason } : {}),
    },
  };
}

// ---- Follow-ups ----

function followUp(frame: RollFrame): FollowUp {
  if (frame.type !== 'runtime.event') return { kind: 'ignored', reason: `relay frame "${frame.type}" changes no approval` };
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

export const rollAdapter = {
  format: 'roll',
  frameSchema: RollFrameSchema,
  followUpSchema: RollFrameSchema,
  normalize,
  renderReply,
  followUp,
} satisfies WireAdapter<RollFrame, RollContext, RollFrame>;

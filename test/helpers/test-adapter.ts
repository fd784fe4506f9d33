import { z } from 'zod';
import type { FollowUp, FrameContext, WireAdapter } from '../../src/adapters/adapter.js';
import { AppError } from '../../src/lib/errors.js';
import type { HandupRequest } from '../../src/requests/request-schema.js';

/**
 * A small native format for testing the format machinery without depending on a real
 * protocol's adapter. Never registered in src/adapters/registry.ts: tests wire it with
 * `startTestServer(config, { adapters: [...adapters, testAdapter] })`.
 *
 * Frames: `{"type":"ask", "id", "tool", "command"?, "session"?, "reasons"?, "explode"?}`; the
 * session comes from the frame or the `session` query key. `type:"notice"` asks nothing
 * (422). Follow-ups: `{"type":"resolved", "id", "session"?, "outcome": allow|deny|cancelled|expired|noop}`.
 * Replies: `{"id": <rpc id>, "method":"decision", "params":{"askId", "decision", "reason"?}}`;
 * `reason` (the feedback) only when the frame said `reasons: true`.
 */
const AskFrame = z.strictObject({
  type: z.literal('ask'),
  id: z.string().min(1).max(600),
  tool: z.string().min(1),
  command: z.string().optional(),
  session: z.string().optional(),
  reasons: z.boolean().optional(),
  explode: z.boolean().optional(),
});
const NoticeFrame = z.strictObject({ type: z.literal('notice'), text: z.string() });
const Frame = z.discriminatedUnion('type', [AskFrame, NoticeFrame]);
type Frame = z.infer<typeof Frame>;

const FollowUpFrame = z.strictObject({
  type: z.literal('resolved'),
  id: z.string().min(1),
  session: z.string().optional(),
  outcome: z.enum(['allow', 'deny', 'cancelled', 'expired', 'noop']),
});
type FollowUpFrame = z.infer<typeof FollowUpFrame>;

interface Ctx {
  askId: string;
  reasons: boolean;
  explode: boolean;
}

export const TEST_FORMAT = 'relay-test';

function sessionOf(frame: { session?: string | undefined }, ctx: FrameContext): string {
  const session = frame.session ?? ctx.query.session;
  if (!session) throw new AppError('invalid_frame', 'session: the frame has no session id; pass ?session=');
  return session;
}

export const testAdapter = {
  format: TEST_FORMAT,
  frameSchema: Frame,
  followUpSchema: FollowUpFrame,
  normalize(frame: Frame, ctx: FrameContext) {
    if (frame.type === 'notice') throw new AppError('unsupported_frame', 'a notice asks nothing of a human');
    const session = sessionOf(frame, ctx);
    const notes = frame.command === undefined ? ['the frame carried no command'] : undefined;
    return {
      request: {
        title: `test-agent wants to run ${frame.tool}`,
        kind: 'command' as const,
        tool: frame.tool,
        source: { agent: 'test-agent', session },
        previews: frame.command === undefined ? [] : [{ type: 'command' as const, inline: frame.command }],
        options: [
          { id: 'allow', label: 'Allow', outcome: 'approve' as const },
          { id: 'deny', label: 'Deny', outcome: 'deny' as const },
        ],
      },
      nativeKey: `${TEST_FORMAT}:${session}:${frame.id}`,
      context: { askId: frame.id, reasons: frame.reasons === true, explode: frame.explode === true },
      ...(notes ? { notes } : {}),
    };
  },
  renderReply(record: HandupRequest, ctx: Ctx, env) {
    if (ctx.explode) throw new Error('boom');
    if (record.status === 'cancelled') return null;
    const decision = record.decision?.option ?? 'dismiss';
    const params: Record<string, unknown> = { askId: ctx.askId, decision };
    if (ctx.reasons && record.decision?.feedback) params.reason = record.decision.feedback;
    return { id: env.rpcId(), method: 'decision', params };
  },
  followUp(frame: FollowUpFrame, ctx: FrameContext): FollowUp {
    if (frame.outcome === 'noop') return { kind: 'ignored', reason: 'nothing changed' };
    const nativeKey = `${TEST_FORMAT}:${sessionOf(frame, ctx)}:${frame.id}`;
    if (frame.outcome === 'cancelled' || frame.outcome === 'expired') return { kind: 'resolve', nativeKey, status: frame.outcome };
    return { kind: 'resolve', nativeKey, status: frame.outcome === 'allow' ? 'approved' : 'denied', option: frame.outcome };
  },
} satisfies WireAdapter<Frame, Ctx, FollowUpFrame>;

/** The test format's cases in the shape of test/fixtures/<format>/e2e-*.json. */
export const testFixtures = {
  'e2e-request.json': {
    kind: 'request',
    description: 'an ask for a shell command, denied with feedback',
    query: { session: 's-1' },
    frame: { type: 'ask', id: 'ask-1', tool: 'shell', command: 'rm -rf build/' },
    expect: { native_key: `${TEST_FORMAT}:s-1:ask-1` },
    decide: { option: 'deny', feedback: 'not on Fridays' },
    status: 'denied',
    reply: { id: 1, method: 'decision', params: { askId: 'ask-1', decision: 'deny' } },
  },
  'e2e-cancel.json': {
    kind: 'followup',
    description: 'the agent withdrew the ask',
    query: { session: 's-1' },
    frame: { type: 'resolved', id: 'ask-1', outcome: 'cancelled' },
    expect: { kind: 'resolve', nativeKey: `${TEST_FORMAT}:s-1:ask-1`, status: 'cancelled' },
  },
};

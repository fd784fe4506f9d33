import { z } from 'zod';
import { AppError } from '../lib/errors.js';
import { MAX_QUESTION_OPTIONS, type CreateRequestBody, type HandupRequest, type Kind, type Option, type Risk } from '../requests/request-schema.js';
import type { FollowUp, FollowUpTarget, FrameContext, Normalized, ReplyEnv, WireAdapter } from './adapter.js';
import { answerText, asTitle, keyPart, toolKind } from './adapter-kit.js';

/**
 * Ask Session Protocol (ask-session-protocol 0.2.0, protocolVersion "1.0"): `session/event`
 * notifications (or their bare events) and interaction objects as `interaction/list` returns
 * them. Replies are the JSON-RPC requests a client sends the Ask host.
 */

// ---- Frames, in Ask's own field names ----

const seq = z.number().int().min(1);
// Ask frames carry no shape tag: a key that must be absent (`kind` on events, `type` and `kind`
// on the envelope) lets a discriminated union tell the shapes apart and keep error paths exact.
const absent = z.undefined().optional();
// Both ids end up in `ask:{session}:{id}`, which has to fit handup's 512-character dedupe_key.
const sessionId = z.string().min(1).max(256);
// The schema takes any string, the empty one too: `ask:{session}:` is a key like any other.
const nativeId = z.string().max(200);

/** Ask 1.0's whole event vocabulary; a type outside it is not an Ask frame. */
const EVENT_TYPES = [
  'session.created',
  'session.ended',
  'turn.started',
  'turn.completed',
  'turn.failed',
  'turn.aborted',
  'model.streaming',
  'model.thinking',
  'tool.use',
  'tool.delta',
  'tool.result',
  'approval.required',
  'approval.updated',
  'plan.proposed',
  'plan.approved',
  'plan.rejected',
  'todos.updated',
  'file.changed',
  'error',
] as const;
const EventType = z.enum(EVENT_TYPES);
const INTERACTION_STATUSES = ['pending', 'approved', 'rejected', 'responded', 'expired'] as const;

const approvalFields = {
  // The schema takes any string; an empty name is shown as a tool call with no name.
  toolName: z.string().max(256),
  args: z.unknown().optional(),
  message: z.string().optional(),
  autoApprovable: z.boolean().optional(),
};
/** The schema leaves suggested answers untyped; hosts send strings or `{label, description?}`, and a number or a boolean reads as its text. */
const SuggestedAnswer = z.union([z.string().min(1), z.number(), z.boolean(), z.looseObject({ label: z.string().min(1), description: z.string().optional() })], {
  error: 'must be a non-empty string, a number, a boolean or {label, description?}',
});

const ApprovalRequired = z.strictObject({
  kind: absent,
  type: z.literal('approval.required'),
  seq,
  payload: z.looseObject({ id: nativeId, ...approvalFields }),
});
const PlanProposed = z.strictObject({
  kind: absent,
  type: z.literal('plan.proposed'),
  seq,
  payload: z.looseObject({ id: nativeId, plan: z.string() }),
});
const QuietEvent = z.strictObject({
  kind: absent,
  type: EventType.exclude(['approval.required', 'plan.proposed']),
  seq,
  payload: z.record(z.string(), z.unknown()),
});

const interaction = <K extends string, P extends z.ZodType>(kind: K, payload: P) =>
  z.strictObject({ id: nativeId, kind: z.literal(kind), status: z.enum(INTERACTION_STATUSES), payload });
const UserInputInteraction = interaction('user_input', z.looseObject({ prompt: z.string(), options: z.array(SuggestedAnswer).optional() }));
const ApprovalInteraction = interaction('approval', z.looseObject(approvalFields));
const PlanInteraction = interaction('plan', z.looseObject({ plan: z.string() }));

const AskItem = z.discriminatedUnion('kind', [
  UserInputInteraction,
  ApprovalInteraction,
  PlanInteraction,
  z.discriminatedUnion('type', [ApprovalRequired, PlanProposed, QuietEvent]),
]);

// The host's notification names no session; `params.sessionId` is countersign's addition.
const RequestEnvelope = z.strictObject({
  kind: absent,
  type: absent,
  jsonrpc: z.literal('2.0').optional(),
  method: z.literal('session/event'),
  params: z.looseObject({ sessionId: sessionId.optional(), event: AskItem }),
});

const REQUEST_EVENTS = new Set(['approval.required', 'plan.proposed']);

/** A frame whose type names a request: an interaction, or a request event bare or in its envelope. */
function isRequestFrame(frame: unknown): boolean {
  const f = frame as { kind?: unknown; type?: unknown; params?: { event?: { type?: unknown; kind?: unknown } } } | null;
  const item = f?.params?.event ?? f;
  return item?.kind !== undefined || REQUEST_EVENTS.has(item?.type as string);
}

export const AskFrameSchema = z.discriminatedUnion('kind', [
  UserInputInteraction,
  ApprovalInteraction,
  PlanInteraction,
  z.discriminatedUnion('type', [ApprovalRequired, PlanProposed, QuietEvent, RequestEnvelope]),
]);
export type AskFrame = z.infer<typeof AskFrameSchema>;
type AskItem = z.infer<typeof AskItem>;

const ApprovalUpdated = z.strictObject({
  type: z.literal('approval.updated'),
  seq,
  payload: z.looseObject({ id: nativeId, status: z.enum(['approved', 'rejected']) }),
});
const PlanResolved = z.strictObject({
  type: z.enum(['plan.approved', 'plan.rejected']),
  seq,
  payload: z.looseObject({ id: nativeId.optional(), plan: z.string() }),
});
const TurnAborted = z.strictObject({ type: z.literal('turn.aborted'), seq, payload: z.looseObject({ turnId: z.string() }) });
const SessionEnded = z.strictObject({
  type: z.literal('session.ended'),
  seq,
  payload: z.looseObject({ sessionId: sessionId, reason: z.string().optional() }),
});
const OtherEvent = z.strictObject({
  type: EventType.exclude(['approval.updated', 'plan.approved', 'plan.rejected', 'turn.aborted', 'session.ended']),
  seq,
  payload: z.record(z.string(), z.unknown()),
});
const FollowUpEvent = z.discriminatedUnion('type', [ApprovalUpdated, PlanResolved, TurnAborted, SessionEnded, OtherEvent]);

// `turn.aborted` and `session.ended` name no interaction, so they end every pending one of the
// session; a bridge that knows the one they end may name it here (or in the `interaction` query
// parameter), and then only that one ends.
const FollowUpEnvelope = z.strictObject({
  type: absent,
  jsonrpc: z.literal('2.0').optional(),
  method: z.literal('session/event'),
  params: z.looseObject({ sessionId: sessionId.optional(), interactionId: nativeId.optional(), event: FollowUpEvent }),
});

export const AskFollowUpSchema = z.discriminatedUnion('type', [ApprovalUpdated, PlanResolved, TurnAborted, SessionEnded, OtherEvent, FollowUpEnvelope]);
export type AskFollowUp = z.infer<typeof AskFollowUpSchema>;

// ---- Frame → handup Request ----

export interface AskContext {
  /** Which reply family answers this request. */
  interaction: 'approval' | 'plan' | 'user_input';
  sessionId: string;
  /** The interaction or plan id (plans are answered by session alone, see renderReply). */
  id: string;
  /**
   * A `plan.proposed` event's `seq`, which orders the session's plans (see supersedes); absent for
   * interaction objects, which carry none. An envelope field: a replay need not repeat it.
   */
  seq?: number;
}

/** The one question of a user_input request; its answer becomes the `response` string. */
const RESPONSE = 'response';

const APPROVE_DENY: Option[] = [
  { id: 'approve', label: 'Approve', outcome: 'approve', style: 'primary' },
  { id: 'deny', label: 'Deny', outcome: 'deny', style: 'danger' },
];

/** The Ask host's own risk table (PermissionHandler): bash high, write/edit medium, destroy critical, else medium. */
function riskOf(toolName: string, kind: Kind): Risk {
  if (kind === 'command' || toolName.toLowerCase() === 'destroy') return 'high';
  return 'medium';
}

/** A short single line reads as a title; anything else goes in the body. */
const fitsTitle = (s: string | undefined): s is string => s !== undefined && s.length <= 120 && !/[\r\n]/.test(s);

/** Ask allows `args` pre-serialised as a JSON string (tool.use says so); read it as the JSON it holds. */
function readArgs(args: unknown): { value: unknown; json: boolean } {
  if (typeof args !== 'string') return { value: args, json: true };
  try {
    return { value: JSON.parse(args) as unknown, json: true };
  } catch {
    return { value: args, json: false };
  }
}

function approvalRequest(
  session: string,
  id: string,
  p: { toolName: string; args?: unknown; message?: string | undefined; autoApprovable?: boolean | undefined },
): Normalized<AskContext> {
  const kind = toolKind(p.toolName);
  const previews: NonNullable<CreateRequestBody['previews']> = [];
  if (p.args !== undefined) {
    const args = readArgs(p.args);
    const command = (args.value as { command?: unknown } | null)?.command;
    if (kind === 'command' && typeof command === 'string') previews.push({ type: 'command', command: { shell: command } });
    previews.push(
      args.json
        ? { type: 'json', title: 'Arguments', inline: JSON.stringify(args.value, null, 2) }
        : { type: 'text', title: 'Arguments', inline: args.value as string },
    );
  }
  const message = p.message?.trim() ? p.message : undefined;
  const key = nativeKey(session, id);
  return {
    request: {
      title: fitsTitle(message) ? message : ((p.toolName ? asTitle(`Approve ${p.toolName}`) : undefined) ?? 'Approve a tool call'),
      summary: message === undefined || fitsTitle(message) ? null : message,
      tool: p.toolName || null,
      kind,
      risk: riskOf(p.toolName, kind),
      source: { agent: 'ask', session },
      previews,
      options: APPROVE_DENY,
      dedupe_key: key,
    },
    nativeKey: key,
    context: { interaction: 'approval', sessionId: session, id },
    ...(p.autoApprovable ? { notes: ['autoApprovable: a rule configured on the Ask host may approve this on its own'] } : {}),
  };
}

function planRequest(session: string, id: string, plan: string, seq?: number): Normalized<AskContext> {
  const key = nativeKey(session, id);
  return {
    request: {
      title: 'Approve the proposed plan',
      kind: 'review',
      source: { agent: 'ask', session },
      previews: [{ type: 'markdown', title: 'Plan', inline: plan }],
      options: APPROVE_DENY,
      dedupe_key: key,
    },
    nativeKey: key,
    context: { interaction: 'plan', sessionId: session, id, ...(seq !== undefined ? { seq } : {}) },
  };
}

function questionRequest(
  session: string,
  id: string,
  p: { prompt: string; options?: Array<z.infer<typeof SuggestedAnswer>> | undefined },
): Normalized<AskContext> {
  if (!p.prompt.trim()) throw new AppError('invalid_frame', 'payload.prompt: must not be empty');
  // The answer travels as one string, so repeated suggestions are the same answer: keep one.
  const options = [
    ...new Map(
      (p.options ?? [])
        .map((o) => (typeof o === 'object' ? { label: o.label, description: o.description ?? null } : { label: String(o) }))
        .map((o) => [o.label, o]),
    ).values(),
  ];
  if (options.length > MAX_QUESTION_OPTIONS) {
    throw new AppError('invalid_frame', `payload.options: ${options.length} suggested answers; countersign takes at most ${MAX_QUESTION_OPTIONS}`);
  }
  const key = nativeKey(session, id);
  return {
    request: {
      title: fitsTitle(p.prompt) ? p.prompt : 'The agent asks a question',
      kind: 'question',
      source: { agent: 'ask', session },
      input: {
        // Suggestions are only suggestions (the reply is free text), so several may be picked
        // and a typed answer is always allowed; renderReply joins them into one response.
        questions: [{ id: RESPONSE, question: p.prompt, ...(options.length ? { options, multi: true } : {}), allow_free_text: true }],
      },
      dedupe_key: key,
    },
    nativeKey: key,
    context: { interaction: 'user_input', sessionId: session, id },
  };
}

const nativeKey = (session: string, id: string) => `ask:${keyPart(session)}:${keyPart(id)}`;

/**
 * Every place a frame can name its session must agree; Ask events themselves never name it,
 * except `session.ended`'s payload.
 */
function sessionOf(candidates: Array<[where: string, value: string | undefined]>): string {
  const named = candidates.filter((c): c is [string, string] => typeof c[1] === 'string' && c[1].length > 0);
  const first = named[0];
  if (!first) {
    throw new AppError(
      'invalid_frame',
      'params.sessionId: missing; Ask events do not name their session, so send params.sessionId or the session query parameter',
    );
  }
  for (const [where, value] of named.slice(1)) {
    if (value !== first[1]) throw new AppError('invalid_frame', `${first[0]}: "${first[1]}" disagrees with ${where} "${value}"`);
  }
  if (first[1].length > 256) throw new AppError('invalid_frame', `${first[0]}: must be at most 256 characters`);
  return first[1];
}

function unsupported(item: AskItem): never {
  const what = item.kind !== undefined ? `${item.kind} interaction ${item.id} is already ${item.status}` : `"${item.type}" events ask nothing of a reviewer`;
  throw new AppError('unsupported_frame', `${what}; countersign takes approval.required, plan.proposed and pending interactions`);
}

function normalize(frame: AskFrame, ctx: FrameContext): Normalized<AskContext> {
  const params = 'method' in frame ? frame.params : undefined;
  const item: AskItem = 'method' in frame ? frame.params.event : frame;
  const session = () =>
    sessionOf([
      ['params.sessionId', params?.sessionId],
      ['the session query parameter', ctx.query.session],
    ]);

  if (item.kind === undefined) {
    if (item.type === 'approval.required') return approvalRequest(session(), item.payload.id, item.payload);
    if (item.type === 'plan.proposed') return planRequest(session(), item.payload.id, item.payload.plan, item.seq);
    return unsupported(item);
  }
  if (item.status !== 'pending') return unsupported(item);
  if (item.kind === 'approval') return approvalRequest(session(), item.id, item.payload);
  if (item.kind === 'plan') return planRequest(session(), item.id, item.payload.plan);
  return questionRequest(session(), item.id, item.payload);
}

// ---- Decided record → Ask JSON-RPC request ----

/**
 * Ask has no dismissal: reject is a decision and `plan/reject` names no plan (a late one could
 * reject a newer proposal). So a request that ended undecided (cancelled, or expired with
 * on_timeout "expire") gets no reply, and the host expires the interaction itself. Feedback has
 * no field in any Ask method; the daemon keeps it in the decision's audit row.
 */
function renderReply(record: HandupRequest, context: AskContext, env: ReplyEnv): unknown {
  const decision = record.decision;
  if (!decision?.outcome) return null;
  const { sessionId, id } = context;
  const rpc = (method: string, params: Record<string, string>) => ({ id: env.rpcId(), method, params });
  const approve = decision.outcome === 'approve';

  if (context.interaction === 'plan') return rpc(approve ? 'plan/approve' : 'plan/reject', { sessionId });
  if (context.interaction === 'approval' || !approve) {
    // A declined user_input is rejected like an approval: the interaction's status becomes "rejected".
    return rpc(approve ? 'interaction/approve' : 'interaction/reject', { sessionId, interactionId: id });
  }
  const response = answerText(decision, RESPONSE);
  // Only a timeout with on_timeout "approve" submits a question unanswered: there is nothing to say.
  if (!response) return null;
  return rpc('interaction/respond', { sessionId, interactionId: id, response });
}

// ---- Follow-ups ----

function followUp(frame: AskFollowUp, ctx: FrameContext, stored?: FollowUpTarget<AskContext>): FollowUp {
  const params = 'method' in frame ? frame.params : undefined;
  const event = 'method' in frame ? frame.params.event : frame;
  const session = (fromPayload?: string) =>
    sessionOf([
      ['payload.sessionId', fromPayload],
      ['params.sessionId', params?.sessionId],
      ['the session query parameter', ctx.query.session],
    ]);
  // Another client approved or rejected it: the record takes the matching option.
  const resolvedUpstream = (id: string, approved: boolean): Extract<FollowUp, { kind: 'resolve' }> => ({
    kind: 'resolve',
    nativeKey: nativeKey(session(), id),
    status: approved ? 'approved' : 'denied',
    option: approved ? 'approve' : 'deny',
  });

  /**
   * What the event may settle, read against the stored request: a plan event settles plans only,
   * and a user_input question is never approved (a submitted question ends answered, with its
   * response, which no event carries); rejected, it ends denied.
   */
  const settles = (id: string, approved: boolean, planEvent: boolean) => {
    const interaction = stored?.context.interaction;
    if (planEvent && interaction !== undefined && interaction !== 'plan') {
      throw new AppError(
        'invalid_frame',
        `payload.id: "${id}" is ${interaction === 'approval' ? 'a tool approval' : 'a user_input question'}, not a plan; plan events settle plans only`,
      );
    }
    if (approved && interaction === 'user_input') {
      throw new AppError('invalid_frame', `payload.status: "${id}" is a user_input question: it is answered (interaction/respond), not approved`);
    }
    return resolvedUpstream(id, approved);
  };

  switch (event.type) {
    case 'approval.updated':
      return settles(event.payload.id, event.payload.status === 'approved', false);
    case 'plan.approved':
    case 'plan.rejected': {
      const approved = event.type === 'plan.approved';
      if (event.payload.id !== undefined) return settles(event.payload.id, approved, true);
      // The host's plan/approve acts on the session's pending plan, and a session has at most one
      // here (a newer plan supersedes the older): without an id, that one.
      const s = session();
      return { ...resolvedUpstream('(its pending plan)', approved), inSession: { session: s, context: { interaction: 'plan', sessionId: s } } };
    }
    case 'turn.aborted':
    case 'session.ended': {
      // Present, even empty, the query names one: an empty id is an id (the schema allows it).
      const named = params?.interactionId ?? ctx.query.interaction;
      const ended = session(event.type === 'session.ended' ? event.payload.sessionId : undefined);
      // Pending when the turn aborts or the session ends → cancelled (docs/formats/ask.md): naming none, every one of the session.
      // A session's end may say why; the record has no field for it, the audit row keeps it.
      const reason = event.type === 'session.ended' && event.payload.reason?.trim() ? { feedback: event.payload.reason } : {};
      if (named === undefined) return { kind: 'resolve-session', session: ended, status: 'cancelled', ...reason };
      return { kind: 'resolve', nativeKey: nativeKey(ended, named), status: 'cancelled', ...reason };
    }
    default:
      return { kind: 'ignored', reason: `"${event.type}" events change no request` };
  }
}

/** Two plans of one session, other than each other. */
const rivalPlans = (a: AskContext, b: AskContext) => a.interaction === 'plan' && b.interaction === 'plan' && a.sessionId === b.sessionId && a.id !== b.id;

/** Whether `a` was proposed before `b`, by the events' `seq`; unknown (false) when either came without one. */
const proposedBefore = (a: AskContext, b: AskContext) => a.seq !== undefined && b.seq !== undefined && a.seq < b.seq;

/**
 * A newer plan proposal supersedes the session's older pending plans (docs/formats/ask.md):
 * `plan/approve` names no plan, so the host applies it to its newest one, which the reviewer of
 * an older card never saw. Newer is the higher `seq` where both frames carry one (a bridge may
 * replay a session's events after the newest), else the later arrival.
 */
function supersedes(newer: AskContext, older: AskContext): boolean {
  return rivalPlans(newer, older) && !proposedBefore(newer, older);
}

/** A plan that arrives after the session's pending plan with a higher `seq` is one the host has superseded. */
function supersededBy(arrived: AskContext, pending: AskContext): boolean {
  return rivalPlans(arrived, pending) && proposedBefore(arrived, pending);
}

function maySupersede(newer: AskContext): boolean {
  return newer.interaction === 'plan';
}

/** A plan's `seq` is the event's, not the plan's: a replay in another envelope is the same request. */
function replayContext({ seq: _seq, ...context }: AskContext): Omit<AskContext, 'seq'> {
  return context;
}

export const askAdapter = {
  format: 'ask',
  frameSchema: AskFrameSchema,
  followUpSchema: AskFollowUpSchema,
  isRequestFrame,
  normalize,
  renderReply,
  followUp,
  supersedes,
  supersededBy,
  maySupersede,
  replayContext,
} satisfies WireAdapter<AskFrame, AskContext, AskFollowUp>;

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ReplyEnv } from '../../src/adapters/adapter.js';
import { rollAdapter, type RollContext } from '../../src/adapters/roll/index.js';
import { AppError } from '../../src/lib/errors.js';
import type { Decision, HandupRequest } from '../../src/requests/request-schema.js';
import { loadSchema, newAjv } from '../helpers/upstream-schemas.js';
import { loadFixtures } from '../helpers/fixtures.js';

const SCHEMA = 'roll-relay-protocol.schema.json';
const fixtures = loadFixtures('roll');

// The schema's root is the relay frame (anyOf of every message type); method params are $defs.
// Its own Ajv instance, with ajv-formats, so `uuid` and `date-time` are checked, not skipped.
const ajv = newAjv();
ajv.addSchema(loadSchema(SCHEMA), 'roll');
const validateFrame = ajv.getSchema('roll')!;
const validateRespondParams = ajv.getSchema('roll#/$defs/approvalRespondParams')!;
const validateCandidateParams = ajv.getSchema('roll#/$defs/approvalCandidateParams')!;

function expectRelayFrame(value: unknown) {
  expect(validateFrame(value) ? [] : validateFrame.errors, JSON.stringify(value).slice(0, 300)).toEqual([]);
}

function expectApprovalRespond(reply: any) {
  expectRelayFrame(reply);
  expect(reply.method).toBe('approval.respond');
  expect(reply.params.requestId).toBe(reply.requestId);
  expect(validateRespondParams(reply.params) ? [] : validateRespondParams.errors).toEqual([]);
}

function expectApprovalCandidate(reply: any) {
  expectRelayFrame(reply);
  expect(reply.method).toBe('approval.candidate');
  expect(validateCandidateParams(reply.params) ? [] : validateCandidateParams.errors).toEqual([]);
}

// ---- Relay 1.1/1.2, which the vendored 1.0 schema does not cover ----
// The 1.0 schema still checks what it knows of these frames: the runtime.request envelope (closed,
// UUID ids, JSON params) once the 1.1 method is swapped for a 1.0 one, and every id against its
// UUID pattern. The 1.1 shapes themselves are transcribed below from upstream's zod schemas
// (the index modules of upstream's relay-protocol and protocol packages: relayInteractionCandidateParamsSchemaV11,
// relayInteractionRequestSchemaV11, relayApprovalInteractionProjectionSchemaV11, userInputFormSchema).
const uuidRef = { $ref: 'roll#/$defs/approvalCandidateParams/properties/approvalId' };
const closed = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object', properties, required, additionalProperties: false });
const candidateValue = {
  anyOf: [
    { type: 'string', maxLength: 10000 },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'array', maxItems: 50, items: { type: 'string', maxLength: 64 } },
  ],
};
const validateInteractionCandidate = ajv.compile({
  anyOf: [
    closed(
      {
        interactionId: uuidRef,
        threadId: uuidRef,
        turnId: uuidRef,
        method: { const: 'approval.request' },
        candidate: {
          anyOf: [
            closed({ decision: { const: 'approve' } }, ['decision']),
            closed({ decision: { const: 'reject' }, reason: { type: 'string', minLength: 1 } }, ['decision']),
          ],
        },
      },
      ['interactionId', 'threadId', 'turnId', 'method', 'candidate'],
    ),
    closed(
      {
        interactionId: uuidRef,
        threadId: uuidRef,
        turnId: uuidRef,
        method: { const: 'userInput.request' },
        candidate: {
          anyOf: [
            closed(
              {
                status: { const: 'submitted' },
                values: {
                  type: 'array',
                  maxItems: 16,
                  items: closed({ id: { type: 'string', minLength: 1, maxLength: 64 }, value: candidateValue }, ['id', 'value']),
                },
              },
              ['status', 'values'],
            ),
            closed({ status: { const: 'cancelled' }, reason: { type: 'string', minLength: 1, maxLength: 500 } }, ['status']),
          ],
        },
      },
      ['interactionId', 'threadId', 'turnId', 'method', 'candidate'],
    ),
  ],
});
const control = (type: unknown, extra: Record<string, unknown> = {}) =>
  closed(
    {
      type,
      id: { type: 'string', minLength: 1, maxLength: 64 },
      label: { type: 'string', minLength: 1, maxLength: 200 },
      description: { type: 'string', minLength: 1, maxLength: 500 },
      required: { type: 'boolean' },
      ...extra,
    },
    ['type', 'id', 'label', 'required'],
  );
const validateInteractionRequest = ajv.compile({
  type: 'object',
  properties: {
    type: { const: 'interaction.request' },
    workspaceId: uuidRef,
    relaySequence: { type: 'integer', minimum: 0 },
    interactionId: uuidRef,
    threadId: uuidRef,
    turnId: uuidRef,
    expiresAt: { type: 'string', format: 'date-time' },
    sensitivity: { const: 'normal' },
    method: { enum: ['approval.request', 'userInput.request'] },
    projection: {
      anyOf: [
        closed(
          {
            approvalId: uuidRef,
            agentName: { type: 'string', minLength: 1 },
            toolName: { type: 'string', minLength: 1 },
            explanation: { type: 'string', minLength: 1, maxLength: 100 },
          },
          ['approvalId', 'agentName', 'toolName'],
        ),
        closed(
          {
            title: { type: 'string', minLength: 1, maxLength: 200 },
            description: { type: 'string', minLength: 1, maxLength: 500 },
            controls: {
              type: 'array',
              minItems: 1,
              maxItems: 16,
              items: {
                anyOf: [
                  control({ enum: ['text', 'multiline'] }, { minLength: { type: 'integer' }, maxLength: { type: 'integer' } }),
                  control({ const: 'number' }, { min: { type: 'number' }, max: { type: 'number' }, integer: { type: 'boolean' } }),
                  control({ const: 'boolean' }),
                  control(
                    { const: 'choice' },
                    {
                      multiple: { type: 'boolean' },
                      options: {
                        type: 'array',
                        minItems: 1,
                        maxItems: 50,
                        items: closed({ id: { type: 'string' }, label: { type: 'string' }, description: { type: 'string' } }, ['id', 'label']),
                      },
                      minSelections: { type: 'integer' },
                      maxSelections: { type: 'integer' },
                    },
                  ),
                ],
              },
            },
          },
          ['controls'],
        ),
      ],
    },
  },
  required: ['type', 'workspaceId', 'relaySequence', 'interactionId', 'threadId', 'turnId', 'expiresAt', 'sensitivity', 'method', 'projection'],
  additionalProperties: false,
});
/** The Runtime 1.1 projection of approval.required inside a runtime.event (relayTimelineEventSchemaV11). */
const validateProjectedApproval = ajv.compile(
  closed(
    {
      approvalId: uuidRef,
      agentName: { type: 'string', minLength: 1 },
      toolName: { type: 'string', minLength: 1 },
      explanation: { type: 'string', minLength: 1, maxLength: 100 },
    },
    ['approvalId', 'agentName', 'toolName'],
  ),
);

function expectValid(validate: ReturnType<typeof ajv.compile>, value: unknown) {
  expect(validate(value) ? [] : validate.errors, JSON.stringify(value).slice(0, 300)).toEqual([]);
}

/** An interaction.request, or a runtime.event with the projected approval: the envelope as 1.0 has it, the approval as 1.1 projects it. */
function expectRelay11Frame(frame: any) {
  if (frame.type === 'interaction.request') return expectValid(validateInteractionRequest, frame);
  expectRelayFrame({ ...frame, event: { ...frame.event, event: { type: 'turn.completed' } } });
  expectValid(validateProjectedApproval, frame.event.event.approval);
}

function expectInteractionCandidate(reply: any) {
  expect(reply.method).toBe('interaction.candidate');
  // What the 1.0 schema covers: the runtime.request envelope, with a method it knows.
  expectRelayFrame({ ...reply, method: 'approval.candidate' });
  expectValid(validateInteractionCandidate, reply.params);
}

/** Checks a reply as the upstream that takes it would. */
function expectValidReply(reply: any) {
  if (reply.method === 'approval.respond') return expectApprovalRespond(reply);
  if (reply.method === 'approval.candidate') return expectApprovalCandidate(reply);
  return expectInteractionCandidate(reply);
}

describe("roll fixtures against the Roll Relay Protocol 1.0 schema (and upstream's 1.1 shapes)", () => {
  const upstream = fixtures.filter(([, fx]) => fx.schema_valid === true);
  const relay11 = fixtures.filter(([, fx]) => fx.relay_1_1 === true);
  // `upstream_valid`: a frame upstream takes that only countersign's own limits refuse.
  const refused = fixtures.filter(([, fx]) => fx.kind === 'invalid' && fx.error.code === 'invalid_frame' && fx.upstream_valid !== true);
  const replies = fixtures.filter(([, fx]) => fx.kind === 'request' && fx.reply !== null);

  it('covers requests, follow-ups and replies of every method', () => {
    expect(upstream.length).toBeGreaterThanOrEqual(15);
    expect(relay11.length).toBeGreaterThanOrEqual(8);
    expect(refused.length).toBeGreaterThanOrEqual(2);
    expect(replies.length).toBeGreaterThanOrEqual(8);
    expect(new Set(replies.map(([, fx]) => fx.reply.method))).toEqual(new Set(['approval.respond', 'approval.candidate', 'interaction.candidate']));
  });

  for (const [file, fx] of upstream) {
    it(`${file}: the frame is a valid relay frame`, () => expectRelayFrame(fx.frame));
  }

  for (const [file, fx] of relay11) {
    it(`${file}: the frame has upstream's Relay 1.1 shape`, () => expectRelay11Frame(fx.frame));
  }

  for (const [file, fx] of refused) {
    it(`${file}: the upstream schema refuses the frame too`, () => {
      expect(validateFrame(fx.frame)).toBe(false);
      if (fx.frame.type === 'interaction.request') expect(validateInteractionRequest(fx.frame)).toBe(false);
    });
  }

  for (const [file, fx] of fixtures.filter(([, f]) => f.upstream_valid === true)) {
    it(`${file}: upstream takes the frame; only countersign's limit refuses it`, () => expectRelay11Frame(fx.frame));
  }

  for (const [file, fx] of replies) {
    it(`${file}: the reply is a runtime.request frame with valid ${fx.reply.method} params`, () => expectValidReply(fx.reply));
  }
});

// ---- Behaviour the fixtures cannot show ----

const WS = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const context: RollContext = {
  workspaceId: WS,
  threadId: '6fa459ea-ee8a-4ca4-894e-db77e160355e',
  turnId: '16fd2706-8baf-433b-82eb-8c7fada847da',
  approvalId: '886313e1-3b8a-4372-9b90-0c9aee199e5d',
};

function approvalFrame(approval: Record<string, unknown>) {
  return {
    type: 'runtime.event',
    workspaceId: WS,
    relaySequence: 1,
    event: {
      protocolVersion: '1.0',
      runtimeInstanceId: '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b',
      sequence: 1,
      timestamp: '2026-08-04T00:00:00.000Z',
      threadId: context.threadId,
      event: {
        type: 'approval.required',
        approval: { id: context.approvalId, turnId: context.turnId, agentName: 'workspace-agent', toolName: 'deploy', preview: {}, ...approval },
      },
    },
  };
}

const normalize = (frame: unknown) => rollAdapter.normalize(rollAdapter.frameSchema.parse(frame), { query: {} });

function ended(status: HandupRequest['status'], decision: Partial<Decision> | null): HandupRequest {
  return {
    id: '01KDXB5M00000000000000REQ0',
    title: 'Deploy',
    callback_url: null,
    summary: null,
    source: { integration: null, agent: 'workspace-agent', session: context.threadId, cwd: null, repo: null, branch: null, host: null },
    kind: 'custom',
    risk: 'low',
    previews: [],
    options: normalize(approvalFrame({})).request.options!,
    input: null,
    timeout: '5m',
    on_timeout: 'expire',
    dedupe_key: null,
    status,
    content_hash: 'sha256:0',
    created_at: 0,
    expires_at: 300_000,
    decision:
      decision === null
        ? null
        : { option: 'approve', content_hash: 'sha256:0', outcome: 'approve', feedback: null, fields: null, decided_by: 'admin', decided_at: 1, ...decision },
  };
}

const realEnv = (): ReplyEnv => ({ now: 0, uuid: randomUUID, ulid: () => '01KDXB5M000000000000000001', rpcId: () => 1 });

describe('roll adapter', () => {
  it('answers an expiry without a decision (on_timeout "expire") with nothing: Relay 1.0 cannot withdraw an approval', () => {
    expect(rollAdapter.renderReply(ended('expired', null), context, realEnv())).toBeNull();
  });

  it('renders replies whose fresh request ids are real UUIDs the schema accepts', () => {
    const approved = rollAdapter.renderReply(ended('approved', {}), context, realEnv());
    const denied = rollAdapter.renderReply(ended('denied', { option: 'deny', outcome: 'deny', feedback: 'Not before the freeze ends' }), context, realEnv());
    expectApprovalRespond(approved);
    expectApprovalRespond(denied);
    expect((denied as any).params).toMatchObject({ decision: 'reject', reason: 'Not before the freeze ends' });
  });

  it('keeps a reason too long for a title as the summary, under the fallback title', () => {
    const reason = `Deploys change production. ${'The release notes list every migration in order. '.repeat(6)}`;
    const { request } = normalize(approvalFrame({ reason }));
    expect(request.title).toBe('workspace-agent wants to run deploy');
    expect(request.summary).toBe(reason);
  });

  it('shows any JSON preview, a bare string included', () => {
    const { request } = normalize(approvalFrame({ preview: 'rm -rf build/' }));
    expect(request.previews).toEqual([{ type: 'json', title: 'Preview', inline: '"rm -rf build/"' }]);
  });

  it('refuses an interaction.request missing its projection, naming the field', () => {
    const frame = { type: 'interaction.request', workspaceId: WS, relaySequence: 3, interactionId: context.approvalId, method: 'approval.request' };
    const parsed = rollAdapter.frameSchema.safeParse(frame);
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((i) => i.path.join('.'))).toContain('projection');
  });

  it('refuses a relay frame that asks nothing of a reviewer', () => {
    expect(() => normalize({ type: 'runtime.ack', workspaceId: WS, throughRelaySequence: 3 })).toThrow(AppError);
  });

  it('refuses a cancel without its reason, as the schema does for Runtime 1.0 and 1.1; an expiry may leave it out', () => {
    const cancel = (protocolVersion: string, resolution: Record<string, unknown>) => {
      const frame = structuredClone(fixtures.find(([file]) => file === 'e2e-cancel.json')![1].frame);
      frame.event.protocolVersion = protocolVersion;
      frame.event.event.resolution = resolution;
      return frame;
    };
    const bare = cancel('1.0', { status: 'cancelled' });
    expect(validateFrame(bare)).toBe(false);
    const parsed = rollAdapter.followUpSchema!.safeParse(bare);
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((i) => i.path.join('.'))).toContain('event.event.resolution.reason');
    expect(rollAdapter.followUpSchema!.safeParse(cancel('1.0', { status: 'cancelled', reason: 'Turn cancelled' })).success).toBe(true);
    expect(validateFrame(cancel('1.1', { status: 'cancelled' }))).toBe(false);
    expect(rollAdapter.followUpSchema!.safeParse(cancel('1.1', { status: 'cancelled' })).success).toBe(false);
    expect(rollAdapter.followUpSchema!.safeParse(cancel('1.0', { status: 'expired' })).success).toBe(true);
  });

  it('refuses unknown fields, as the closed 1.0 schema does', () => {
    const frame = approvalFrame({ expiresAt: '2026-08-04T00:05:00.000Z' });
    expect(rollAdapter.frameSchema.safeParse(frame).success).toBe(false);
    expect(validateFrame(frame)).toBe(false);
  });
});

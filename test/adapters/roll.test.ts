import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ReplyEnv } from '../../src/adapters/adapter.js';
import { rollAdapter, type RollContext } from '../../src/adapters/roll.js';
import { AppError } from '../../src/errors.js';
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

function expectRelayFrame(value: unknown) {
  expect(validateFrame(value) ? [] : validateFrame.errors, JSON.stringify(value).slice(0, 300)).toEqual([]);
}

function expectApprovalRespond(reply: any) {
  expectRelayFrame(reply);
  expect(reply.method).toBe('approval.respond');
  expect(reply.params.requestId).toBe(reply.requestId);
  expect(validateRespondParams(reply.params) ? [] : validateRespondParams.errors).toEqual([]);
}

describe('roll fixtures against the Roll Relay Protocol 1.0 schema', () => {
  const upstream = fixtures.filter(([, fx]) => fx.schema_valid === true);
  const refused = fixtures.filter(([, fx]) => fx.kind === 'invalid' && fx.error.code === 'invalid_frame');
  const replies = fixtures.filter(([, fx]) => fx.kind === 'request' && fx.reply !== null);

  it('covers requests, follow-ups and replies', () => {
    expect(upstream.length).toBeGreaterThanOrEqual(15);
    expect(refused.length).toBeGreaterThanOrEqual(2);
    expect(replies.length).toBeGreaterThanOrEqual(8);
  });

  for (const [file, fx] of upstream) {
    it(`${file}: the frame is a valid relay frame`, () => expectRelayFrame(fx.frame));
  }

  for (const [file, fx] of refused) {
    it(`${file}: the upstream schema refuses the frame too`, () => {
      expect(validateFrame(fx.frame)).toBe(false);
    });
  }

  for (const [file, fx] of replies) {
    it(`${file}: the reply is a runtime.request frame with valid approval.respond params`, () => expectApprovalRespond(fx.reply));
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

  it('names the Roll 1.1 interaction frames it does not take', () => {
    const frame = { type: 'interaction.request', workspaceId: WS, relaySequence: 3, interactionId: context.approvalId, method: 'approval.request' };
    expect(() => normalize(frame)).toThrow(AppError);
    expect(() => normalize(frame)).toThrow(/interaction\.request/);
  });

  it('refuses unknown fields, as the closed 1.0 schema does', () => {
    const frame = approvalFrame({ expiresAt: '2026-08-04T00:05:00.000Z' });
    expect(rollAdapter.frameSchema.safeParse(frame).success).toBe(false);
    expect(validateFrame(frame)).toBe(false);
  });
});

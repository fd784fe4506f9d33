import { compileCheck, textOf } from '../../lib/compile-check.js';
import { DATE_TIME, UUID } from './common.js';

/**
 * The Roll frame a Companion relays for each approval, checked by a compiled validator before
 * zod: a `runtime.event` carrying `approval.required`, in Runtime 1.0's full form or Runtime
 * 1.1's projection. A strict subset of the frame schema (index.ts, approvals.ts) that zod
 * returns unchanged, so a frame it accepts is the parse's result as it is; every other frame,
 * and any mistake, goes to zod. The projection's `explanation` is trimmed by zod: the subset
 * takes only one with nothing to trim (`\S` at both ends: the complement of what
 * `String.prototype.trim` removes). test/unit/common-frame.test.ts holds what this accepts
 * against the zod schema.
 */
const uuid = { type: 'string', pattern: UUID.source };
const sequence = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
const name = { type: 'string', minLength: 1 };

const FULL_APPROVAL = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'turnId', 'agentName', 'toolName', 'preview'],
  // `preview` is any JSON value: frames reach adapters only through the daemon's JSON parser.
  properties: { id: uuid, turnId: uuid, agentName: name, toolName: name, preview: true, reason: { type: 'string' } },
};

const PROJECTED_APPROVAL = {
  type: 'object',
  additionalProperties: false,
  required: ['approvalId', 'agentName', 'toolName'],
  properties: {
    approvalId: uuid,
    agentName: name,
    toolName: name,
    explanation: { ...textOf(100), pattern: '^\\S(?:[\\s\\S]*\\S)?$' },
  },
};

const APPROVAL_EVENT = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'workspaceId', 'relaySequence', 'event'],
  properties: {
    type: { const: 'runtime.event' },
    workspaceId: uuid,
    relaySequence: sequence,
    event: {
      type: 'object',
      additionalProperties: false,
      required: ['protocolVersion', 'runtimeInstanceId', 'sequence', 'timestamp', 'threadId', 'event'],
      properties: {
        protocolVersion: { enum: ['1.1', '1.0'] },
        runtimeInstanceId: uuid,
        sequence,
        timestamp: { type: 'string', pattern: DATE_TIME.source },
        threadId: uuid,
        turnId: uuid,
        event: {
          type: 'object',
          additionalProperties: false,
          required: ['type', 'approval'],
          properties: { type: { const: 'approval.required' }, approval: { anyOf: [FULL_APPROVAL, PROJECTED_APPROVAL] } },
        },
      },
    },
  },
};

/** Whether `frame` is an approval of the common shape, which the frame schema returns unchanged. */
export const isCommonRollFrame: (frame: unknown) => boolean = compileCheck(APPROVAL_EVENT);

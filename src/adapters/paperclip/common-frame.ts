import { compileCheck, textOf } from '../../lib/compile-check.js';
import { CREATED, EVENT, REQUEST_V2, StatusSchema } from './common.js';
import { ACTIONS } from './runtime.js';

/**
 * The PaperClip frame most runners send, checked by a compiled validator before zod: a v2
 * permission approval, in a `runtime_request.created` event or bare. A strict subset of the
 * frame schema (index.ts) that zod returns unchanged (it has no defaults or transforms there),
 * so a frame it accepts is the parse's result as it is; every other frame, and any mistake,
 * goes to zod. The choice keys' uniqueness is checked after ajv, as zod's refinement does.
 * test/unit/common-frame.test.ts holds what this accepts against the zod schema.
 */
const V2_PERMISSION = {
  type: 'object',
  additionalProperties: false,
  required: ['schema', 'requestKind', 'requestId', 'type', 'status', 'prompt', 'choices', 'origin', 'turnId'],
  properties: {
    schema: { const: REQUEST_V2 },
    requestKind: { const: 'permission_approval' },
    requestId: textOf(160),
    type: { const: 'permission' },
    status: { enum: [...StatusSchema.options] },
    prompt: textOf(4000),
    choices: {
      type: 'array',
      minItems: 1,
      maxItems: 4,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['key', 'label'],
        properties: { key: { enum: [...ACTIONS] }, label: textOf(500) },
      },
    },
    // Any object: the driver's details are open upstream.
    details: { type: 'object' },
    origin: {
      type: 'object',
      additionalProperties: false,
      required: ['adapter'],
      properties: { adapter: textOf(160), provider: textOf(160), method: textOf(500) },
    },
    turnId: textOf(240),
    itemId: { ...textOf(240), type: ['string', 'null'] },
  },
};

/** The PRP event envelope is open: only the fields the adapter reads are held. */
const CREATED_EVENT = {
  type: 'object',
  required: ['schema', 'eventType', 'runId', 'payload'],
  properties: {
    schema: { const: EVENT },
    eventType: { const: CREATED },
    runId: textOf(160),
    normalizedSessionId: textOf(160),
    turnId: textOf(160),
    payload: { type: 'object', required: ['request'], properties: { request: V2_PERMISSION } },
  },
};

const commonShape = compileCheck({ anyOf: [CREATED_EVENT, V2_PERMISSION] });

type Choices = ReadonlyArray<{ key: string }>;
const requestOf = (frame: { schema: string; payload?: { request: { choices: Choices } }; choices?: Choices }) =>
  frame.schema === EVENT ? frame.payload!.request : (frame as { choices: Choices });

/** Whether `frame` is a v2 permission approval of the common shape, which the frame schema returns unchanged. */
export function isCommonPaperclipFrame(frame: unknown): boolean {
  if (!commonShape(frame)) return false;
  const keys = requestOf(frame as Parameters<typeof requestOf>[0]).choices.map((c) => c.key);
  return new Set(keys).size === keys.length;
}

import { z } from 'zod';
import { validationError } from '../lib/errors.js';
import { NO_NUL, noNul } from '../lib/no-nul.js';
import { isControllerSeq } from '../formats/sequenced-reply.js';
import { OnTimeoutSchema, TimeoutTextSchema, type OnTimeout } from '../requests/request-schema.js';
import { durationParam, waitBudget } from './schemas.js';

/**
 * The query of a native-format submission (docs/formats/README.md): the handup fields a native frame
 * cannot carry (`timeout`, `on_timeout`, `callback_url`), `wait` for the HTTP long-poll, and
 * every other key as per-format context for the adapter (e.g. Ask's `session`).
 */
export const FormatQuerySchema = z
  .object({
    timeout: TimeoutTextSchema.optional(),
    on_timeout: OnTimeoutSchema.optional(),
    callback_url: z.string().min(1).max(2048).optional(),
    wait: durationParam.optional(),
  })
  // Context values name sessions and interactions, which the stores look up in text columns.
  .catchall(z.string().max(1024, 'must be at most 1024 characters').refine(noNul, NO_NUL));

export interface FormatQuery {
  /** Applied over the normalised request; absent keys leave the frame's own values. */
  overrides: { timeout?: string; on_timeout?: OnTimeout; callback_url?: string };
  /** Long-poll budget in ms (capped at 60 s), or null for an immediate answer. */
  waitMs: number | null;
  /** Per-format context: `FrameContext.query` of the adapter. */
  context: Record<string, string>;
}

/**
 * Where the query arrived: a POST of a request frame takes everything; a bridge socket has no
 * `wait` (replies are pushed); a follow-up frame creates nothing, so only context applies.
 */
export type FormatQueryUse = 'request' | 'socket' | 'follow-up';

// A bridge that asks for its controller sequence where it has no effect must hear so, not get `controllerSeq: 1`.
const CONTROLLER_SEQ = 'is taken only by GET …/reply of a PaperClip request; on the bridge socket send {"type":"countersign.controller_seq","next":n}';

const NOT_USED: Record<FormatQueryUse, Record<string, string>> = {
  request: { controller_seq: CONTROLLER_SEQ },
  socket: { wait: 'is not used on the WebSocket: replies are pushed on the socket', controller_seq: CONTROLLER_SEQ },
  'follow-up': {
    controller_seq: CONTROLLER_SEQ,
    wait: 'is not used for follow-up frames',
    timeout: 'is not used for follow-up frames',
    on_timeout: 'is not used for follow-up frames',
    callback_url: 'is not used for follow-up frames',
  },
};

/** Parses the query; 400 `invalid_query` naming the key. */
export function parseFormatQuery(raw: unknown, use: FormatQueryUse): FormatQuery {
  const parsed = FormatQuerySchema.safeParse(raw ?? {});
  if (!parsed.success) throw validationError('invalid_query', parsed.error.issues, 'query');
  const refused = Object.keys(NOT_USED[use]).filter((k) => parsed.data[k] !== undefined);
  if (refused.length) {
    throw validationError(
      'invalid_query',
      refused.map((k) => ({ path: [k], message: NOT_USED[use][k]! })),
      'query',
    );
  }
  const { timeout, on_timeout, callback_url, wait, ...context } = parsed.data;
  const overrides: FormatQuery['overrides'] = {};
  if (timeout !== undefined) overrides.timeout = timeout;
  if (on_timeout !== undefined) overrides.on_timeout = on_timeout;
  if (callback_url !== undefined) overrides.callback_url = callback_url;
  return { overrides, waitMs: wait === undefined ? null : waitBudget(wait), context: context as Record<string, string> };
}

/**
 * The reply route's query: `wait` long-polls (absent answers at once; longer than 60 s is
 * capped); `controller_seq` renders a PaperClip command with the bridge's sequence number.
 */
export const ReplyQuery = z.strictObject({
  wait: durationParam.optional(),
  controller_seq: z
    .string()
    .regex(/^[1-9][0-9]*$/, 'must be a positive integer')
    .transform(Number)
    .refine(isControllerSeq, 'must be a positive integer no larger than 2^53 - 1')
    .optional(),
});

export { waitBudget };

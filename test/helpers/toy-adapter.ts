import { z } from 'zod';
import type { WireAdapter } from '../../src/adapters/adapter.js';
import type { HandupRequest } from '../../src/requests/request-schema.js';

/**
 * A sixth wire format as a newcomer would write it: one adapter, nothing else. It is not in
 * src/adapters/registry.ts; tests wire it with `startTestServer(config, { adapters: [...adapters,
 * toyAdapter] })` to show that the endpoints, the list filters, the configuration, the policy's
 * `format` matcher and the page pick a format up from its adapter alone.
 *
 * Frames: `{"question": "…", "id": "…"}`. Reply: `{"id", "answer": <option id> | null}`.
 */
const ToyFrame = z.strictObject({ question: z.string().min(1), id: z.string().min(1).max(100) });
type ToyFrame = z.infer<typeof ToyFrame>;

export const TOY_FORMAT = 'toy';
/** The toy protocol's own deadline: its requests expire then unless they say otherwise. */
export const TOY_DEFAULT_TIMEOUT = '7m';

export const toyAdapter = {
  format: TOY_FORMAT,
  frameSchema: ToyFrame,
  config: { default_timeout: TOY_DEFAULT_TIMEOUT },
  normalize: (frame: ToyFrame) => ({
    request: { title: frame.question, kind: 'review' as const, source: { agent: 'toy-agent' } },
    nativeKey: `${TOY_FORMAT}:${frame.id}`,
    context: { id: frame.id },
  }),
  renderReply: (record: HandupRequest, context: { id: string }) => ({ id: context.id, answer: record.decision?.option ?? null }),
} satisfies WireAdapter<ToyFrame, { id: string }>;

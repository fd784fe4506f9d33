import type { z } from 'zod';
import type { WireAdapter } from '../adapters/adapter.js';

/** `adapter.frameSchema.safeParse(frame)`, without zod's walk for a frame of the format's common shape. */
export function parseFrame<Frame>(adapter: WireAdapter<Frame, unknown, unknown>, frame: unknown): z.ZodSafeParseResult<Frame> {
  return adapter.isCommonFrame?.(frame) ? { success: true, data: frame as Frame } : adapter.frameSchema.safeParse(frame);
}

/**
 * `adapter.followUpSchema.safeParse(frame)` (the adapter has one). Where it is the frame schema
 * itself (Roll's relay frames carry both kinds), a frame of the common shape skips zod's walk too.
 */
export function parseFollowUp<Follow>(adapter: WireAdapter<unknown, unknown, Follow>, frame: unknown): z.ZodSafeParseResult<Follow> {
  const schema = adapter.followUpSchema!;
  return (schema as z.ZodType) === adapter.frameSchema ? (parseFrame(adapter, frame) as z.ZodSafeParseResult<Follow>) : schema.safeParse(frame);
}

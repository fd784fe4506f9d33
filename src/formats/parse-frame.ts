import type { z } from 'zod';
import type { WireAdapter } from '../adapters/adapter.js';

/** `adapter.frameSchema.safeParse(frame)`, without zod's walk for a frame of the format's common shape. */
export function parseFrame<Frame>(adapter: WireAdapter<Frame, unknown, unknown>, frame: unknown): z.ZodSafeParseResult<Frame> {
  return adapter.isCommonFrame?.(frame) ? { success: true, data: frame as Frame } : adapter.frameSchema.safeParse(frame);
}

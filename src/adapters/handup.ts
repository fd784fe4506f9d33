import { CreateRequestSchema, type CreateRequestBody } from '../requests/request-schema.js';
import { isCommonCreateBody } from '../requests/create-body-fast-path.js';
import type { WireAdapter } from './adapter.js';

/**
 * handup's own Request record: the native shape, so normalising is the identity. It has no
 * native key (its `dedupe_key` follows handup's pending-only rule) and no native reply: a
 * handup client reads the decided Request itself.
 */
export const handupAdapter = {
  format: 'handup',
  frameSchema: CreateRequestSchema,
  isCommonFrame: isCommonCreateBody,
  normalize: (frame: CreateRequestBody) => ({ request: frame, nativeKey: null, context: null }),
  renderReply: () => null,
} satisfies WireAdapter<CreateRequestBody, null>;

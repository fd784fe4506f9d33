import type { WireAdapter } from '../adapters/adapter.js';
import type { Clock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';

/** `next` of the bridge's `countersign.controller_seq` and `?controller_seq=`: a positive safe integer. */
export function isControllerSeq(n: unknown): n is number {
  return Number.isSafeInteger(n) && (n as number) >= 1;
}

/** Refuses a sequence number for a format whose replies take none (400 `code`, naming `field`). */
export function requireSequencedFormat(adapter: WireAdapter, code: 'invalid_query' | 'invalid_frame', field: string): void {
  if (!adapter.sequenceReply) throw new AppError(code, `${field}: ${adapter.format} replies carry no controller sequence`);
}

/**
 * A stored native reply as sent with the bridge's sequence number `seq` (docs/formats/paperclip.md): the
 * adapter stamps it, with fresh ids, or says it takes no number (`sequenced: false`, sent as is).
 */
export function sequencedReply(adapter: WireAdapter, reply: unknown, seq: number, clock: Clock): { reply: unknown; sequenced: boolean } {
  if (reply === null || reply === undefined || !adapter.sequenceReply) return { reply: reply ?? null, sequenced: false };
  const stamped = adapter.sequenceReply(reply, seq, { ulid: () => newId(clock.now()) });
  return stamped === null ? { reply, sequenced: false } : { reply: stamped, sequenced: true };
}

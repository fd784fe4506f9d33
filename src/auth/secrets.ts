import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

// The one-shot hash: a third of createHash's cost for a short input (it runs on every authenticated request).
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/**
 * Constant-time comparison of two secrets given as their `sha256Hex` digests: equal-length
 * inputs whatever the secrets' lengths, so neither length nor content leaks through timing.
 */
export function digestsEqual(a: string, b: string): boolean {
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** The shortest admin or metrics secret taken: anything shorter is guessable. */
export const MIN_BEARER_SECRET_LENGTH = 16;

/** What one `Authorization: Bearer <secret>` can carry: printable ASCII without spaces. */
export const BEARER_SECRET_CHARS = /^[\x21-\x7e]*$/;

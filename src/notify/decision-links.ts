import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Decision-link tokens: `<request>.<option>.<hash>.<hook>.<expiry>.<mac>`, an
 * HMAC-SHA-256 over everything before the MAC with the key the daemons share. The token binds
 * the request, one option, the content hash the notification showed, the hook and an expiry;
 * changing any part breaks the MAC, and rotating the key breaks every outstanding token.
 * Single use comes from the decision itself: a request is decided once.
 */
export interface LinkClaims {
  requestId: string;
  option: string;
  /** `sha256:<hex>` */
  contentHash: string;
  hook: string;
  /** Unix ms. */
  expiresAt: number;
}

const DOMAIN = 'countersign decision link v1\n';
const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64url');

function mac(key: Buffer, payload: string): string {
  return createHmac('sha256', key).update(DOMAIN).update(payload).digest('base64url');
}

export function signLink(key: Buffer, c: LinkClaims): string {
  const hash = Buffer.from(c.contentHash.replace(/^sha256:/, ''), 'hex');
  const payload = [c.requestId, b64(c.option), b64(hash), c.hook, c.expiresAt.toString(36)].join('.');
  return `${payload}.${mac(key, payload)}`;
}

const PART = /^[A-Za-z0-9_-]+$/;

/** The claims of a genuine token, or null for anything forged, altered, truncated or signed with another key. */
export function verifyLink(key: Buffer, token: string): LinkClaims | null {
  if (token.length > 512) return null;
  const parts = token.split('.');
  if (parts.length !== 6 || !parts.every((p) => PART.test(p))) return null;
  const [requestId, option, hash, hook, expiry, given] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(mac(key, parts.slice(0, 5).join('.')));
  const actual = Buffer.from(given);
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return null;
  const expiresAt = parseInt(expiry, 36);
  if (!Number.isSafeInteger(expiresAt)) return null;
  return {
    requestId,
    option: Buffer.from(option, 'base64url').toString('utf8'),
    contentHash: `sha256:${Buffer.from(hash, 'base64url').toString('hex')}`,
    hook,
    expiresAt,
  };
}

import { createHmac } from 'node:crypto';

/**
 * The headers of one callback attempt (docs/callbacks.md). `webhook-id` is the delivery id and
 * stays the same across retries; both timestamps are fresh per attempt (Unix seconds).
 *
 * Keys, from `callbacks.secret`:
 * - Standard Webhooks (`webhook-signature: v1,<base64 HMAC-SHA256 of "<msg-id>.<timestamp>.<body>">`): a
 *   `whsec_<base64>` secret is base64-decoded, exactly as the standardwebhooks libraries do;
 *   any other secret is used as its UTF-8 bytes (verify with `new Webhook(secret, {format: 'raw'})`).
 * - handup (`x-handup-signature: sha256=<hex HMAC-SHA256 of "ts.body">`): the secret string's
 *   UTF-8 bytes as configured, `whsec_` prefix included, because a handup receiver keys its
 *   HMAC with the secret string it was given.
 * Without a secret only the ids and timestamps are sent (unsigned delivery).
 */
export function webhookHeaders({
  secret,
  id,
  timestampSec,
  body,
}: {
  secret: string | null;
  id: string;
  timestampSec: number;
  body: string;
}): Record<string, string> {
  const ts = String(timestampSec);
  const headers: Record<string, string> = {
    'webhook-id': id,
    'webhook-timestamp': ts,
    'x-handup-timestamp': ts,
  };
  if (secret) {
    headers['webhook-signature'] = `v1,${createHmac('sha256', standardWebhooksKey(secret)).update(`${id}.${ts}.${body}`).digest('base64')}`;
    headers['x-handup-signature'] = `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${ts}.${body}`).digest('hex')}`;
  }
  return headers;
}

const WHSEC_PREFIX = 'whsec_';

// Standard base64 with its padding: what the standardwebhooks libraries decode (they refuse the rest).
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Why a signing secret would give signatures no receiver can check, or null: a `whsec_` secret
 * must carry its key as standard base64, padded, since Node's decoder skips what it cannot read
 * where the receivers' libraries refuse the whole secret.
 */
export function signingSecretProblem(secret: string): string | null {
  if (!secret.startsWith(WHSEC_PREFIX)) return null;
  const key = secret.slice(WHSEC_PREFIX.length);
  if (key === '' || !CANONICAL_BASE64.test(key))
    return 'a whsec_ secret must carry its key bytes as standard base64, padded (as the Standard Webhooks libraries read it)';
  return null;
}

export function standardWebhooksKey(secret: string): Buffer {
  return secret.startsWith(WHSEC_PREFIX) ? Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

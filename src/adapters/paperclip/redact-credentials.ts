/**
 * Driver `details` are provider-defined and may carry credentials (upstream's own test sends
 * `authorization: "Bearer …"`). Before anything of them reaches a reviewer, the value of every
 * credential-like key is replaced, at any depth (docs/formats/paperclip.md). The stored frame keeps the
 * original (the reply is built from the native context); only previews are built from this copy.
 */

export const REDACTED = '[redacted]';

// Compared with the key lower-cased and stripped of separators, so `api_key`, `x-api-key`,
// `apiKey` and `APIKEY` all match; docs/formats/paperclip.md lists them all.
const CREDENTIAL_WORDS = ['authorization', 'cookie', 'token', 'secret', 'password', 'apikey', 'accesskey', 'passwd', 'privatekey', 'credential'];

export function isCredentialKey(key: string): boolean {
  const bare = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  return CREDENTIAL_WORDS.some((w) => bare.includes(w));
}

/** Whether `value` has a credential-like key at any depth (so redactCredentials hides something). */
export function hasCredentials(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasCredentials);
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([k, v]) => isCredentialKey(k) || hasCredentials(v));
}

/** A copy of `value` with every credential-like key's value replaced by "[redacted]". */
export function redactCredentials<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => redactCredentials(v)) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isCredentialKey(k) ? REDACTED : redactCredentials(v)])) as T;
}

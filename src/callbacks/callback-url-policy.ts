import { AppError } from '../errors.js';

/**
 * The `callback_url` rules of product.md §6, checked at create time and again before each
 * delivery: the host must be allowlisted (exact, case-insensitive; `*.example.com` means
 * subdomains only), HTTPS is required except `http://` to loopback, and credentials or
 * fragments are refused. An empty allowlist refuses every callback.
 */
export function checkCallbackUrl(raw: string, allowlist: readonly string[]): URL {
  const refuse = (why: string) => new AppError('callback_not_allowed', `callback_url: ${why}`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('is not a valid absolute URL');
  }
  if (url.username || url.password) throw refuse('must not contain credentials');
  if (raw.includes('#')) throw refuse('must not contain a fragment');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('must use https');
  const host = hostOf(url);
  if (url.protocol === 'http:' && !isLoopbackHost(host)) throw refuse('must use https (plain http is allowed only to loopback hosts)');
  if (allowlist.length === 0) throw refuse('callbacks are disabled: callbacks.allowlist is empty');
  if (!hostAllowed(host, allowlist)) throw refuse(`host "${host}" is not in callbacks.allowlist`);
  return url;
}

/** The URL's host without IPv6 brackets, lowercased. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export function hostAllowed(host: string, allowlist: readonly string[]): boolean {
  const h = host.toLowerCase();
  return allowlist.some((entry) => {
    const e = entry.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
    if (e.startsWith('*.')) return h.endsWith(e.slice(1)) && h.length > e.length - 1;
    return h === e;
  });
}

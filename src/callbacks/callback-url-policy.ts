import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';
import { AppError } from '../lib/errors.js';

/**
 * The `callback_url` rules (docs/callbacks.md), checked at create time and again before each
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

/**
 * One spelling per host, so an allowlist entry and a URL host compare equal whenever they name
 * the same thing: brackets and case dropped, IP literals in ipaddr.js normal form (IPv4-mapped
 * IPv6 as its IPv4 address, as the dial check judges it), names as ASCII (punycode), the form
 * the URL parser gives.
 */
export function canonicalHost(host: string): string {
  const h = host
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  if (ipaddr.isValid(h)) return ipaddr.process(h).toNormalizedString();
  return domainToASCII(h) || h;
}

export function isLoopbackHost(host: string): boolean {
  const h = canonicalHost(host);
  return h === 'localhost' || (ipaddr.isValid(h) && ipaddr.process(h).range() === 'loopback');
}

/** Exact entries match the host itself; `*.example.com` matches names below it (never an IP literal). */
export function hostAllowed(host: string, allowlist: readonly string[]): boolean {
  const h = canonicalHost(host);
  const isIp = ipaddr.isValid(h);
  return allowlist.some((entry) => {
    const e = entry.trim();
    if (e.startsWith('*.')) return !isIp && h.endsWith(`.${canonicalHost(e.slice(2))}`);
    return canonicalHost(e) === h;
  });
}

/** True when `host` equals a non-wildcard entry (the entries that may unlock non-public addresses). */
export function hostExactlyAllowlisted(host: string, allowlist: readonly string[]): boolean {
  const h = canonicalHost(host);
  return allowlist.some((entry) => !entry.trim().startsWith('*.') && canonicalHost(entry) === h);
}

import { parse } from 'pg-connection-string';

/** The modes pg reads as `verify-full` unless told to read them as libpq does. */
const LIBPQ_MODES = new Set(['prefer', 'require', 'verify-ca']);

/** The URL's query parameters (libpq's `sslmode`, `sslrootcert`, …). */
export function urlParams(url: string): URLSearchParams {
  return new URLSearchParams(url.split('?')[1]?.split('#')[0] ?? '');
}

/** The URL's `sslmode`, or null. */
export function sslModeOf(url: string): string | null {
  return urlParams(url).get('sslmode');
}

/** Whether pg must be told to read this URL's `sslmode` as libpq does (the URL does not say either way itself). */
export function needsLibpqCompat(url: string): boolean {
  const mode = sslModeOf(url);
  return mode !== null && LIBPQ_MODES.has(mode) && !/[?&]uselibpqcompat=/.test(url);
}

/**
 * `storage.url` read as the store connects with it: its `sslmode` as libpq means it
 * (postgres/libpq-ssl-url.ts), so reading it never prints pg's warning that these modes mean `verify-full`.
 */
export function parseConnectionUrl(url: string): ReturnType<typeof parse> {
  return parse(url, needsLibpqCompat(url) ? { useLibpqCompat: true } : {});
}

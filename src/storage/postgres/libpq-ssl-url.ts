import pg from 'pg';
import { needsLibpqCompat, sslModeOf } from '../postgres-url.js';

/**
 * `storage.url` as pg should read it for its `sslmode` to mean what libpq's does. pg takes
 * `prefer`, `require` and `verify-ca` as `verify-full` (a self-signed certificate refused under
 * `require`) unless the URL also says `uselibpqcompat=true`, which this adds. libpq's `prefer`
 * also falls back to a plain connection when the server speaks no TLS; pg's does not, so a
 * `prefer` URL is tried once here and, when the server has no TLS, read as `disable`. A URL that
 * already says `uselibpqcompat` is left as written.
 */
export async function libpqSslUrl(url: string, connectTimeoutMs = 5000): Promise<string> {
  if (!needsLibpqCompat(url)) return url;
  const hash = url.indexOf('#');
  const compat = hash < 0 ? `${url}&uselibpqcompat=true` : `${url.slice(0, hash)}&uselibpqcompat=true${url.slice(hash)}`;
  if (sslModeOf(url) !== 'prefer') return compat;
  const probe = new pg.Client({ connectionString: compat, connectionTimeoutMillis: connectTimeoutMs });
  try {
    await probe.connect();
    return compat;
  } catch (err) {
    if (/does not support SSL/i.test((err as Error).message)) return compat.replace(/([?&])sslmode=prefer(?=&|#|$)/, '$1sslmode=disable');
    // Any other failure is the connection's own, and is reported when the store connects.
    return compat;
  } finally {
    await probe.end().catch(() => {});
  }
}

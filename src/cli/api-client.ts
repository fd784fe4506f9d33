import { CliError } from './cli-error.js';

export type Fetch = typeof fetch;

export interface ApiClient {
  readonly baseUrl: string;
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  delete<T>(path: string): Promise<T>;
  put<T>(path: string, body: unknown): Promise<T>;
}

/**
 * The CLI's only way to the daemon: JSON over HTTP with a bearer token. Every failure becomes a
 * CliError carrying the daemon's error code (or `unreachable` / `bad_response`), so the caller
 * prints one line and exits 4.
 */
export function createApiClient({ baseUrl, token, fetch: fetchFn = fetch }: { baseUrl: string; token: string; fetch?: Fetch }): ApiClient {
  async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    // Outside the try below: a body that cannot be written as JSON (nested too deep) is not a network failure.
    const json = body === undefined ? undefined : JSON.stringify(body);
    let res: Response;
    try {
      res = await fetchFn(baseUrl + path, { method, headers, body: json });
    } catch (err) {
      throw new CliError('unreachable', `cannot reach the daemon at ${baseUrl}: ${describeNetworkError(err)}`, undefined, networkCode(err));
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      // The connection dropped mid-answer (a daemon stopping): as unreachable as no connection.
      throw new CliError('unreachable', `the daemon at ${baseUrl} closed the connection: ${describeNetworkError(err)}`);
    }
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const e = parsed as { error?: unknown; code?: unknown } | undefined;
      const code = typeof e?.code === 'string' ? e.code : `http_${res.status}`;
      const message = typeof e?.error === 'string' ? e.error : text.trim().slice(0, 200) || res.statusText;
      throw new CliError(code, `${message} (HTTP ${res.status} from ${method} ${path.split('?')[0]})`, res.status);
    }
    if (parsed === undefined) throw new CliError('bad_response', `the daemon answered ${method} ${path.split('?')[0]} with no JSON body`);
    return parsed as T;
  }

  return {
    baseUrl,
    get: (path) => request('GET', path),
    post: (path, body) => request('POST', path, body ?? {}),
    delete: (path) => request('DELETE', path),
    put: (path, body) => request('PUT', path, body),
  };
}

/** The system error code under fetch's "fetch failed" (`ECONNREFUSED`, `EPIPE`, …), if any. */
function networkCode(err: unknown): string | undefined {
  const cause = (err as { cause?: unknown })?.cause;
  const code = ((cause ?? err) as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function describeNetworkError(err: unknown): string {
  // fetch wraps the socket error ("fetch failed"); the cause says what actually happened.
  const cause = (err as { cause?: unknown })?.cause;
  const inner = cause instanceof Error ? cause : err instanceof Error ? err : null;
  if (!inner) return String(err);
  const code = (inner as { code?: unknown }).code;
  return typeof code === 'string' && !inner.message.includes(code) ? `${code} ${inner.message}` : inner.message;
}

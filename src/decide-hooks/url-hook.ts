import { request, type Dispatcher } from 'undici';
import { HookFailure, MAX_ANSWER_BYTES } from './hook-answer.js';

export interface UrlHookOptions {
  timeoutMs: number;
  userAgent: string;
  signal?: AbortSignal;
  /** For tests; default undici's global dispatcher. */
  dispatcher?: Dispatcher;
}

/**
 * POSTs `{"input": <Request>}` to a decide hook service (the shape an Open Policy Agent data API
 * takes). The destination is the operator's own configuration, so it is dialled as written;
 * redirects are never followed. Resolves with the answer text ('' for 204); any other status
 * than 2xx, a network error, a timeout or more than 64 KiB is a HookFailure.
 */
export async function runUrlHook(url: string, input: string, { timeoutMs, userAgent, signal, dispatcher }: UrlHookOptions): Promise<string> {
  // Our own controller, aborted only while the call is in flight: a signal that fired after the
  // answer was read would make undici fail a body nobody listens to any more.
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, timeoutMs);
  const onShutdown = () => abort.abort();
  signal?.addEventListener('abort', onShutdown, { once: true });
  let res: Dispatcher.ResponseData | undefined;
  try {
    try {
      res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'user-agent': userAgent },
        body: input,
        signal: abort.signal,
        ...(dispatcher ? { dispatcher } : {}),
      });
    } catch (err) {
      if (timedOut) throw new HookFailure('timeout', `no answer within ${timeoutMs} ms`);
      throw new HookFailure('network', `cannot reach the hook: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    if (res.statusCode === 204) return '';
    if (res.statusCode < 200 || res.statusCode > 299) throw new HookFailure('http', `answered HTTP ${res.statusCode}`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > MAX_ANSWER_BYTES) throw new HookFailure('too_large', `the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks).toString('utf8');
  } catch (err) {
    if (err instanceof HookFailure) throw err;
    if (timedOut) throw new HookFailure('timeout', `no answer within ${timeoutMs} ms`);
    throw new HookFailure('network', `the answer broke off: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onShutdown);
    // Whatever was not read is dropped with the connection, never left to hold a socket.
    // (undici fails a body destroyed unread with an AbortError: nobody needs to hear it.)
    if (res && !res.body.destroyed) res.body.on('error', () => {}).destroy();
  }
}

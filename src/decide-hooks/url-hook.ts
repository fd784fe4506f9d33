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
  const timeout = AbortSignal.timeout(timeoutMs);
  const abort = signal ? AbortSignal.any([timeout, signal]) : timeout;
  let res: Dispatcher.ResponseData;
  try {
    res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'user-agent': userAgent },
      body: input,
      signal: abort,
      ...(dispatcher ? { dispatcher } : {}),
    });
  } catch (err) {
    if (timeout.aborted) throw new HookFailure('timeout', `no answer within ${timeoutMs} ms`);
    throw new HookFailure('network', `cannot reach the hook: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
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
    if (timeout.aborted) throw new HookFailure('timeout', `no answer within ${timeoutMs} ms`);
    throw new HookFailure('network', `the answer broke off: ${(err as Error).message}`);
  } finally {
    // Whatever was not read is dropped with the connection, never left to hold a socket.
    res.body.destroy();
  }
}

import type { Logger } from 'pino';
import type WebSocket from 'ws';
import { z } from 'zod';
import type { Authenticated } from '../auth/authenticate-secret.js';
import type { Clock } from '../lib/clock.js';
import { AppError, toErrorBody, validationError } from '../lib/errors.js';

/** A browser's socket has this long after the upgrade to say who it is. */
export const FIRST_MESSAGE_AUTH_TIMEOUT_MS = 10_000;

const AuthMessage = z.strictObject({ type: z.literal('auth'), token: z.string().min(1, 'must not be empty').max(1024) });

/** Close codes: 4000 + the HTTP status the same refusal gets over HTTP. */
const CLOSE_CODE = { invalid_request: 4400, unauthorized: 4401, forbidden: 4403, rate_limited: 4429 } as const;

export interface FirstMessageAuthOptions {
  /** Who the secret is; null or a thrown AppError refuses the socket. */
  authenticate(secret: string): Promise<Authenticated | null>;
  clock: Clock;
  log: Logger;
  timeoutMs?: number;
  /** Called once the socket has authenticated as a reviewer, after `{"type":"auth.ok"}` was sent. */
  onAuthenticated(who: Authenticated): void;
}

/**
 * Authenticates a WebSocket that opened without a token (a browser cannot set headers on the
 * upgrade) by its first message, `{"type":"auth","token":"<secret>"}`. A reviewer is answered
 * `{"type":"auth.ok"}`; anything else (no message in time, a bad message, a wrong secret, a
 * submit token) gets an `{error, code}` message and the socket is closed with 4000 + the HTTP
 * status. Until then the socket is sent nothing.
 */
export function awaitFirstMessageAuth(
  socket: WebSocket,
  { authenticate, clock, log, timeoutMs = FIRST_MESSAGE_AUTH_TIMEOUT_MS, onAuthenticated }: FirstMessageAuthOptions,
) {
  let settled = false;
  const refuse = (err: AppError, closeCode: number = CLOSE_CODE[err.code as keyof typeof CLOSE_CODE] ?? 4401) => {
    settle();
    if (socket.readyState !== socket.OPEN) return;
    socket.send(JSON.stringify(toErrorBody(err)));
    socket.close(closeCode, err.code);
  };
  const timer = clock.setTimer(
    () => refuse(new AppError('unauthorized', `no auth message within ${timeoutMs / 1000}s: send {"type":"auth","token":"<token>"} first`)),
    timeoutMs,
  );
  function settle() {
    settled = true;
    clock.clearTimer(timer);
    socket.off('message', onMessage);
  }

  function onMessage(data: WebSocket.RawData, isBinary: boolean) {
    if (settled) return;
    // Only the first message counts: nothing else is read while it is checked.
    socket.off('message', onMessage);
    const notJson = () => refuse(new AppError('invalid_request', 'the first message must be JSON text: {"type":"auth","token":"<token>"}'));
    if (isBinary) return notJson();
    let message: unknown;
    try {
      message = JSON.parse(String(data));
    } catch {
      return notJson();
    }
    const parsed = AuthMessage.safeParse(message);
    if (!parsed.success) return refuse(validationError('invalid_request', parsed.error.issues, 'message'));
    authenticate(parsed.data.token).then(
      (who: Authenticated | null) => {
        if (settled) return;
        if (!who) return refuse(new AppError('unauthorized', 'the token is invalid, revoked or expired'));
        if (who.principal.kind !== 'admin') return refuse(new AppError('forbidden', 'a submit token cannot use this route; it needs the admin token'));
        settle();
        if (socket.readyState !== socket.OPEN) return;
        socket.send(JSON.stringify({ type: 'auth.ok' }));
        onAuthenticated(who);
      },
      (err: unknown) => {
        // A refusal (a wrong secret, the failed-authentication throttle) is answered like any other.
        if (err instanceof AppError) return refuse(err);
        // A listener must not throw into ws; the client retries as after any dropped stream.
        log.error({ err }, 'cannot authenticate an events subscriber');
        refuse(new AppError('internal_error', 'internal error'), 1011);
      },
    );
  }

  socket.on('message', onMessage);
  socket.once('close', () => settle());
}

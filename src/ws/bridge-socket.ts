import type { Logger } from 'pino';
import type WebSocket from 'ws';
import type { FollowUp, WireAdapter } from '../adapters/adapter.js';
import { z } from 'zod';
import type { Principal } from '../auth/principal.js';
import { admitter, type RateLimit } from '../auth/rate-limit.js';
import type { Clock } from '../lib/clock.js';
import { AppError, RequestNotTaken, toErrorBody, validationError } from '../lib/errors.js';
import type { RequestIntake } from '../formats/request-intake.js';
import { isControllerSeq, requireSequencedFormat, sequencedReply } from '../formats/sequenced-reply.js';
import { parseFollowUp, parseFrame } from '../formats/parse-frame.js';
import { parseJson } from '../http/json-body-parser.js';
import type { FormatQuery } from '../http/format-query.js';
import type { RequestEvents } from '../requests/request-events.js';
import type { StoredRequest } from '../storage/request-records.js';
import type { RequestService } from '../requests/request-service.js';

export interface BridgeSocketOptions {
  adapter: WireAdapter;
  principal: Principal;
  /** The upgrade request's query: overrides and context for every frame on this socket. */
  query: FormatQuery;
  intake: RequestIntake;
  requests: RequestService;
  events: RequestEvents;
  rateLimit: RateLimit;
  clock: Clock;
  log: Logger;
  pingIntervalMs: number;
  /** A bridge whose unsent data passes this many bytes is cut (it replays its frames to resync). */
  maxBufferedBytes: number;
  /** `requests.max_body_bytes`: a larger message is a bad frame, answered like any other. */
  maxMessageBytes: number;
  /**
   * Whether the secret the socket was opened with still authenticates. A socket outlives the
   * upgrade's check: a token revoked or expired since (on any daemon) must not go on asking.
   */
  stillAuthenticated: () => Promise<boolean>;
}

/** Closed with 4000 + the status the same refusal gets over HTTP, as the events socket is. */
export const TOKEN_RETIRED_CLOSE_CODE = 4401;

/** Messages to countersign itself rather than native frames: their `type` starts with this. */
const CONTROL_PREFIX = 'countersign.';
const ControllerSeqMessage = z.strictObject({
  type: z.literal('countersign.controller_seq'),
  next: z.number().refine(isControllerSeq, 'must be a positive integer no larger than 2^53 - 1'),
});

/**
 * One bridge connection on `/v1/formats/{format}/ws` (docs/formats/README.md). Each message is one
 * native frame: a follow-up when the adapter's follow-up schema takes it and it resolves
 * something, else a request. Frames that change nothing and ask nothing get no answer.
 * A request is answered with `countersign.accepted`; when it ends, its native reply is sent
 * verbatim on this socket (at once for a replayed frame whose request already ended).
 * Requests that end without a reply (none in the protocol, or resolved upstream) send nothing.
 * Bad frames get `countersign.error` and the socket stays open. Messages are handled one at a
 * time, in order: the next waits until the previous one is stored and answered.
 *
 * `{"type":"countersign.controller_seq","next":n}` gives the sequence number the bridge's
 * controller expects next (docs/formats/paperclip.md): the replies pushed after it that take one (PaperClip
 * commands) carry n, n+1, … in push order; the stored replies keep theirs.
 */
export function attachBridgeSocket(socket: WebSocket, o: BridgeSocketOptions) {
  const { adapter, principal, intake } = o;
  /** Requests sent on this socket that are still pending, each with how its frame wants the reply. */
  const watching = new Map<string, (stored: StoredRequest) => unknown>();
  /** The controller sequence number of the next pushed reply that takes one; null until the bridge gives one. */
  let nextSeq: number | null = null;
  let missedPongs = 0;

  function send(message: unknown) {
    if (socket.readyState !== socket.OPEN) return;
    // A backlog of earlier replies past the limit is a bridge that stopped reading; the size of
    // the reply about to be written is not (a long answer goes to a bridge with nothing unsent).
    if (socket.bufferedAmount > o.maxBufferedBytes) {
      o.log.warn({ buffered: socket.bufferedAmount }, 'bridge socket too slow; disconnecting');
      socket.terminate();
      return;
    }
    socket.send(JSON.stringify(message));
  }

  function sendReply(stored: StoredRequest, replyFor: (stored: StoredRequest) => unknown) {
    const native = replyFor(stored);
    if (native === null || native === undefined) return;
    if (nextSeq === null) return send(native);
    const { reply, sequenced } = sequencedReply(adapter, native, nextSeq, o.clock);
    if (sequenced) nextSeq++;
    send(reply);
  }

  /** A message to countersign itself; only `countersign.controller_seq` exists. */
  function control(message: unknown) {
    const parsed = ControllerSeqMessage.safeParse(message);
    if (!parsed.success) throw validationError('invalid_frame', parsed.error.issues);
    requireSequencedFormat(adapter, 'invalid_frame', 'countersign.controller_seq');
    nextSeq = parsed.data.next;
  }

  const unsubscribe = o.events.on((e) => {
    const replyFor = watching.get(e.request.id);
    if (e.type === 'request.created' || !replyFor) return;
    watching.delete(e.request.id);
    // The event carries the record only; the reply was stored in the same transaction. A token
    // revoked since the frame came gets no decision: the socket ends as at its next message.
    o.requests
      .get(e.request.id, principal)
      .then(async (stored) => {
        if (!(await refusedAsRetired())) sendReply(stored, replyFor);
      })
      .catch((err: unknown) => o.log.error({ err, id: e.request.id }, 'cannot read the native reply for a bridge'));
  });

  async function handle(raw: string) {
    // The same parser as HTTP bodies (depth, valid Unicode, finite numbers, prototype keys).
    const parsed = parseJson(raw);
    if (!parsed.ok) {
      throw new AppError('invalid_frame', parsed.syntax ? 'the message is not valid JSON: send one JSON object per message' : parsed.message);
    }
    const frame = parsed.value;
    const type = (frame as { type?: unknown } | null)?.type;
    if (typeof type === 'string' && type.startsWith(CONTROL_PREFIX)) return control(frame);
    const asked = await readFollowUp(frame);
    if (asked?.kind === 'resolve' || asked?.kind === 'resolve-session') {
      await intake.applyFollowUp(adapter, asked, principal);
      return;
    }
    if (asked?.kind === 'ignored') {
      // Nothing to follow up: a request frame, unless it asks nothing of a human either. One the
      // request schema refuses is noise, unless its type names a request: that one is malformed,
      // and gets the same invalid_frame as over HTTP.
      if (!parseFrame(adapter, frame).success && !adapter.isRequestFrame?.(frame)) return;
      try {
        await submit(frame);
      } catch (err) {
        // Event noise gets no answer; a request that cannot be taken does.
        if (!(err instanceof AppError && err.code === 'unsupported_frame') || err instanceof RequestNotTaken) throw err;
      }
      return;
    }
    await submit(frame);
  }

  /**
   * The follow-up schema is tried first (docs/formats/README.md); null when it does not take the frame.
   * Schemas may overlap (a protocol's event stream carries both kinds), so an adapter error on
   * a frame the request schema also takes defers to the request path.
   */
  async function readFollowUp(frame: unknown): Promise<FollowUp | null> {
    if (!adapter.followUpSchema || !parseFollowUp(adapter, frame).success) return null;
    try {
      return await intake.readFollowUp(adapter, frame, o.query.context, principal);
    } catch (err) {
      if (parseFrame(adapter, frame).success) return null;
      throw err;
    }
  }

  // Counted once a frame is known to be a request, so event noise a bridge forwards costs nothing.
  const takeRate = admitter(o.rateLimit, principal);

  async function submit(frame: unknown) {
    const { stored, replyFor } = await intake.submit(adapter, frame, { principal, overrides: o.query.overrides, context: o.query.context, admit: takeRate });
    send({ type: 'countersign.accepted', id: stored.record.id });
    if (stored.record.status === 'pending') watching.set(stored.record.id, replyFor);
    else sendReply(stored, replyFor);
  }

  /** Ends the socket when its secret no longer authenticates; true when it did. */
  async function refusedAsRetired(): Promise<boolean> {
    if (await o.stillAuthenticated()) return false;
    if (socket.readyState === socket.OPEN) {
      send({ type: 'countersign.error', ...toErrorBody(new AppError('unauthorized', 'the token has been revoked or has expired')) });
      socket.close(TOKEN_RETIRED_CLOSE_CODE, 'unauthorized');
    }
    return true;
  }

  // One message at a time, in arrival order.
  let queue = Promise.resolve();
  socket.on('message', (data: WebSocket.RawData) => {
    const raw = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    queue = queue.then(async () => {
      try {
        if (socket.readyState !== socket.OPEN || (await refusedAsRetired())) return;
        if (raw.length > o.maxMessageBytes) {
          throw new AppError('payload_too_large', `the message is ${raw.length} bytes; requests.max_body_bytes is ${o.maxMessageBytes}`);
        }
        await handle(raw.toString('utf8'));
      } catch (err) {
        if (!(err instanceof AppError)) o.log.error({ err, format: adapter.format }, 'bridge frame failed');
        const appError = err instanceof AppError ? err : new AppError('internal_error', 'internal error');
        send({ type: 'countersign.error', ...toErrorBody(appError) });
      }
    });
  });

  const pinger = setInterval(() => {
    if (missedPongs >= 2) {
      socket.terminate();
      return;
    }
    missedPongs++;
    socket.ping();
    // A socket that only waits for replies is ended too, within a ping of the revocation.
    queue = queue
      .then(() => refusedAsRetired())
      .then(
        () => {},
        (err: unknown) => o.log.warn({ err: (err as Error).message, format: adapter.format }, 'cannot check the bridge socket token'),
      );
  }, o.pingIntervalMs);
  pinger.unref();
  socket.on('pong', () => (missedPongs = 0));
  socket.on('close', () => {
    clearInterval(pinger);
    unsubscribe();
    watching.clear();
  });
}

import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * A caller's own id is kept when it is well formed (a proxy's or a client's trace id: letters,
 * digits and `.`, `_`, `:`, `-`, at most 128); anything else in the header (log-line injection, a huge value)
 * is ignored, not refused, and the request gets an id of its own.
 */
const WELL_FORMED = /^[A-Za-z0-9][\w.:-]{0,127}$/;

// Random bytes drawn 3 KiB at a time: one call to the CSPRNG per 256 ids instead of one per request.
const ID_BYTES = 12;
let pool = Buffer.alloc(0);
let at = 0;

/** Fastify's `genReqId`: the caller's well-formed `X-Request-Id`, else 16 random URL-safe characters. */
export function genRequestId(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  if (typeof given === 'string' && WELL_FORMED.test(given)) return given;
  if (at + ID_BYTES > pool.length) {
    pool = randomBytes(ID_BYTES * 256);
    at = 0;
  }
  at += ID_BYTES;
  const id = pool.toString('base64url', at - ID_BYTES, at);
  // Well formed itself, so a proxy that passes it back has it kept: a letter or digit first.
  return id[0] === '-' || id[0] === '_' ? `x${id.slice(1)}` : id;
}

/** Every answer carries its id (errors included), so a caller can quote the line it produced. */
export function registerRequestIdHeader(app: FastifyInstance) {
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}

import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Headers on every response of `GET /v1/blobs/{hash}`, errors included. The bytes are an
 * agent's: they must never become a document of this origin, whatever they contain and
 * however they are opened (a link, a new tab, a sniffing browser). So: always a download,
 * never sniffed, and sandboxed (no script, a unique origin) should a browser render them anyway;
 * other sites may not embed them.
 */
export const BLOB_RESPONSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': "sandbox; default-src 'none'",
  'x-content-type-options': 'nosniff',
  'content-disposition': 'attachment',
  'cross-origin-resource-policy': 'same-origin',
});

/** A route-level `onSend` hook, so error replies get the headers as well. */
export async function setBlobResponseHeaders(_request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  reply.headers(BLOB_RESPONSE_HEADERS);
  return payload;
}

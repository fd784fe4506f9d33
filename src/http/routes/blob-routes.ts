import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { submitterKey } from '../../auth/principal.js';
import type { BlobUpload } from '../../blobs/blob-store.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../lib/errors.js';
import { rateLimitUploads } from '../rate-limit-hook.js';
import { setBlobResponseHeaders } from '../blob-response-headers.js';
import { errors } from '../openapi.js';

/** Feeds the request body into the upload as it arrives, one chunk at a time; stops reading at the first refusal. */
async function pump(body: Readable, upload: BlobUpload): Promise<void> {
  try {
    for await (const chunk of body) await upload.write(chunk as Buffer);
  } catch (err) {
    // The stream's own failure means the client went away mid-upload.
    throw err instanceof AppError ? err : new AppError('invalid_request', 'the upload was cut off before its end');
  }
}

const BlobHash = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be sha256:<64 hex>');
// Raw bytes, as OpenAPI writes them (a Buffer in the code).
const Bytes = z.instanceof(Buffer).meta({ type: 'string', format: 'binary' });
const StreamedBytes = z.instanceof(Readable).meta({ type: 'string', format: 'binary' });

/**
 * Preview files, addressed by SHA-256. Registered in its own scope because uploads take any
 * content type as raw bytes, which the JSON routes must not. The body is not parsed: the
 * handler streams it into the store, which refuses (413) as soon as a limit is passed.
 */
export function registerBlobRoutes(app: FastifyInstance, deps: Deps) {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    const r = scope.withTypeProvider<ZodTypeProvider>();

    r.post(
      '/v1/blobs',
      {
        config: { auth: 'submit', openapi: { body: Bytes, consumes: ['application/octet-stream', '*/*'] } },
        // Counted before a byte of the body is read.
        onRequest: rateLimitUploads(deps.rateLimit),
        schema: {
          summary: 'Upload bytes (any content type, at most 16 MiB; submit tokens within blobs.quota_per_token); answers the hash as text/plain sha256:<hex>',
          response: {
            201: { description: 'The blob hash, to use in previews', content: { 'text/plain': { schema: BlobHash } } },
            ...errors('invalid_request', 'payload_too_large', 'quota_exceeded', 'rate_limited'),
          },
        },
      },
      async (request, reply) => {
        const body = request.body as Readable | undefined;
        if (!body) throw new AppError('invalid_request', 'send the file bytes as the body');
        const p = request.principal;
        const length = request.headers['content-length'];
        let upload: BlobUpload | undefined;
        try {
          upload = await deps.blobs.begin(submitterKey(p), { limited: p.kind === 'submit', declared: length === undefined ? undefined : Number(length) });
          await pump(body, upload);
          if (upload.size === 0) throw new AppError('invalid_request', 'send the file bytes as the body');
          const { hash } = await upload.finish();
          return reply.code(201).type('text/plain; charset=utf-8').send(hash);
        } catch (err) {
          await upload?.abort();
          // The rest of the body is not read: close the connection rather than drain it.
          if (!body.readableEnded) void reply.header('connection', 'close');
          throw err;
        }
      },
    );

    r.get(
      '/v1/blobs/:hash',
      {
        onSend: setBlobResponseHeaders,
        schema: {
          summary: 'Download a blob (always as an attachment)',
          params: z.strictObject({ hash: BlobHash }),
          // Streamed from the store, chunk by chunk.
          response: { 200: { description: 'The bytes', content: { 'application/octet-stream': { schema: StreamedBytes } } }, ...errors('not_found') },
        },
      },
      async (request, reply) => {
        const blob = await deps.blobs.open(request.params.hash);
        if (!blob) throw new AppError('not_found', `blob ${request.params.hash} not found`);
        return reply.header('content-length', blob.size).type('application/octet-stream').send(Readable.from(blob.chunks()));
      },
    );
  });
}

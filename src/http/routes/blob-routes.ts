import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { errors } from '../openapi.js';

export const BLOB_MAX_BYTES = 16 * 1024 * 1024;

const BlobHash = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be sha256:<64 hex>');
// Raw bytes, as OpenAPI writes them (a Buffer in the code).
const Bytes = z.instanceof(Buffer).meta({ type: 'string', format: 'binary' });

/**
 * Preview files, addressed by SHA-256. Registered in its own scope because uploads take any
 * content type as raw bytes, which the JSON routes must not.
 */
export function registerBlobRoutes(app: FastifyInstance, deps: Deps) {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BLOB_MAX_BYTES }, (_req, body, done) => done(null, body));
    const r = scope.withTypeProvider<ZodTypeProvider>();

    r.post('/v1/blobs', {
      config: { auth: 'submit', openapi: { body: Bytes, consumes: ['application/octet-stream', '*/*'] } },
      bodyLimit: BLOB_MAX_BYTES,
      schema: {
        summary: 'Upload bytes (any content type, at most 16 MiB); answers the hash as text/plain sha256:<hex>',
        response: {
          201: { description: 'The blob hash, to use in previews', content: { 'text/plain': { schema: BlobHash } } },
          ...errors('invalid_request'),
        },
      },
    }, async (request, reply) => {
      const body = request.body;
      if (!Buffer.isBuffer(body) || body.length === 0) throw new AppError('invalid_request', 'send the file bytes as the body');
      return reply.code(201).type('text/plain; charset=utf-8').send(deps.blobs.put(body));
    });

    r.get('/v1/blobs/:hash', {
      schema: {
        summary: 'Download a blob (always as an attachment)',
        params: z.strictObject({ hash: BlobHash }),
        response: { 200: { description: 'The bytes', content: { 'application/octet-stream': { schema: Bytes } } }, ...errors('not_found') },
      },
    }, async (request, reply) => {
      const bytes = deps.blobs.get(request.params.hash);
      if (!bytes) throw new AppError('not_found', `blob ${request.params.hash} not found`);
      return reply
        .header('content-security-policy', "sandbox; default-src 'none'")
        .header('x-content-type-options', 'nosniff')
        .header('content-disposition', 'attachment')
        .type('application/octet-stream')
        .send(bytes);
    });
  });
}

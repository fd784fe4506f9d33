import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { setBlobResponseHeaders } from '../blob-response-headers.js';

export const BLOB_MAX_BYTES = 16 * 1024 * 1024;

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
      config: { auth: 'submit' },
      bodyLimit: BLOB_MAX_BYTES,
      schema: { summary: 'Upload bytes; answers the hash as text/plain sha256:<hex>' },
    }, async (request, reply) => {
      const body = request.body;
      if (!Buffer.isBuffer(body) || body.length === 0) throw new AppError('invalid_request', 'send the file bytes as the body');
      return reply.code(201).type('text/plain; charset=utf-8').send(deps.blobs.put(body));
    });

    r.get('/v1/blobs/:hash', {
      onSend: setBlobResponseHeaders,
      schema: { summary: 'Download a blob', params: z.strictObject({ hash: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be sha256:<64 hex>') }) },
    }, async (request, reply) => {
      const bytes = deps.blobs.get(request.params.hash);
      if (!bytes) throw new AppError('not_found', `blob ${request.params.hash} not found`);
      return reply.type('application/octet-stream').send(bytes);
    });
  });
}

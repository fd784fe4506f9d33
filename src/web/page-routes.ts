import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.js';
import { setPageHeaders } from './page-headers.js';
import { loadStaticFiles, type StaticFile } from './static-files.js';

/**
 * The reviewer inbox: `/` is the page, `/ui/*` its scripts and styles. All public (the page
 * holds no data; every API call it makes is authenticated). Files are revalidated on each load
 * (`no-cache` + ETag) so an upgraded daemon never runs with yesterday's scripts.
 */
export function registerPageRoutes(app: FastifyInstance, files: Map<string, StaticFile> = loadStaticFiles()) {
  const send = (request: FastifyRequest, reply: FastifyReply, file: StaticFile) => {
    setPageHeaders(reply).header('cache-control', 'no-cache').header('etag', file.etag);
    if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
    return reply.type(file.type).send(file.body);
  };

  app.get('/', { config: { auth: 'public' }, schema: { hide: true } }, async (request, reply) => {
    const page = files.get('index.html');
    if (!page) throw new AppError('not_found', 'the web page is not installed (public/index.html is missing)');
    return send(request, reply, page);
  });

  app.get('/ui/*', { config: { auth: 'public' }, schema: { hide: true } }, async (request, reply) => {
    const path = (request.params as { '*': string })['*'];
    const file = files.get(path);
    if (!file) throw new AppError('not_found', `no file /ui/${path}`);
    return send(request, reply, file);
  });
}

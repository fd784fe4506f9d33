import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { AppError } from '../../lib/errors.js';
import { HistoryQuery, RequestDoc } from '../schemas.js';

/** Cursors are opaque to clients: base64url of `<resolved_at>.<id>` of the last item served. */
export function encodeCursor(resolvedAt: number, id: string): string {
  return Buffer.from(`${resolvedAt}.${id}`).toString('base64url');
}

export function decodeCursor(cursor: string): { resolvedAt: number; id: string } {
  const m = /^(\d+)\.([0-9A-Z]{26})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw new AppError('invalid_request', 'query.cursor: not a cursor returned by this endpoint');
  return { resolvedAt: Number(m[1]), id: m[2]! };
}

export function registerHistoryRoutes(app: FastifyInstance, deps: Deps) {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/history',
    {
      schema: {
        summary: 'Resolved requests, newest resolution first; pass next_cursor as cursor for older ones',
        querystring: HistoryQuery,
        response: {
          200: z.object({
            items: z.array(z.object({ outcome: z.string(), resolved_at: z.number(), request: RequestDoc })),
            next_cursor: z.string().nullable(),
          }),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const rows = await deps.requests.history({
        outcome: q.outcome,
        kind: q.kind,
        agent: q.agent,
        q: q.q,
        before: q.cursor ? decodeCursor(q.cursor) : undefined,
        limit: q.limit + 1,
      });
      const page = rows.slice(0, q.limit);
      const last = page[page.length - 1];
      return {
        items: page.map((s) => ({ outcome: s.record.status, resolved_at: s.resolvedAt ?? 0, request: s.record })),
        next_cursor: rows.length > q.limit && last ? encodeCursor(last.resolvedAt ?? 0, last.record.id) : null,
      };
    },
  );
}

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { KINDS } from '../../requests/request-schema.js';

const FormatListDoc = z.object({
  formats: z.array(z.string()).describe("every value a request's `format` can hold here: the wire formats served (handup first), then mcp"),
  native: z.array(z.string()).describe('the wire formats served at /v1/formats/{format}/…'),
  kinds: z.array(z.string()).describe("every value of a request's `kind`"),
});

/**
 * `GET /v1/formats`: the format and kind names the list filters and the policy's matchers take,
 * as this daemon is wired. The reviewer page builds its filter lists from it.
 */
export function registerFormatListRoute(app: FastifyInstance, deps: Deps) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/v1/formats',
    {
      schema: { summary: "The request formats and kinds this daemon serves (the filters' choices)", response: { 200: FormatListDoc } },
    },
    async () => ({ formats: [...deps.formats.requestFormats()], native: [...deps.formats.nativeFormats()], kinds: [...KINDS] }),
  );
}

import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { LINK_KEY } from '../../notify/notifier.js';

/**
 * `POST /v1/links/rotate` (admin): a new decision-link key, shared by every daemon through the
 * store. Every link already sent stops working at once (404); new notifications carry new ones.
 */
export function registerLinkKeyRoutes(app: FastifyInstance, deps: Deps) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/v1/links/rotate',
    {
      config: { noBody: true },
      schema: { summary: 'Rotate the decision-link key: every outstanding link is revoked', response: { 200: z.object({ rotated_at: z.number().int() }) } },
    },
    async () => {
      const at = deps.clock.now();
      await deps.store.write((tx) => tx.keys.replace(LINK_KEY, randomBytes(32).toString('base64url'), at));
      deps.log.info('decision-link key rotated: outstanding links are revoked');
      return { rotated_at: at };
    },
  );
}

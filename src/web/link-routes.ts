import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Deps } from '../deps.js';
import { SECRET_PATH_PREFIX } from '../http/route-config.js';
import { inboxLink } from '../notify/notify-envelope.js';
import type { LinkOutcome } from '../notify/link-service.js';
import { LINK_PAGE_CSP, renderLinkPage } from './link-page.js';

// A form with at most a feedback text (64 KiB) and the token.
const FORM_LIMIT = 80 * 1024;

/**
 * `GET /d/<token>` shows a decision link's confirmation page and decides nothing; `POST
 * /d/<token>` (the page's form, or an ntfy http action) decides. Public: the token is the
 * credential. Answers are HTML with a strict CSP, never cached, never sending a Referer.
 */
export function registerLinkRoutes(app: FastifyInstance, deps: Deps) {
  const send = (reply: FastifyReply, outcome: LinkOutcome, token: string) =>
    reply
      .code(outcome.status)
      .header('content-security-policy', LINK_PAGE_CSP)
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('x-content-type-options', 'nosniff')
      .header('x-frame-options', 'DENY')
      .header('x-robots-tag', 'noindex, nofollow')
      .type('text/html; charset=utf-8')
      .send(renderLinkPage(outcome, (id) => inboxLink(deps.notifier.baseUrl(), id), token));

  void app.register(async (scope) => {
    // The page's form posts urlencoded fields; any other body (or none, from ntfy) carries nothing we read.
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_req, _body, done) => done(null, {}));

    // A wildcard, not `:token`: tokens are longer than a path parameter may be (100 characters).
    scope.get<{ Params: { '*': string } }>(
      `${SECRET_PATH_PREFIX}*`,
      { config: { auth: 'public', secretPath: true }, schema: { hide: true } },
      async (request, reply) => {
        const token = request.params['*'];
        return send(reply, await deps.links.inspect(token, request.ip), token);
      },
    );

    scope.post<{ Params: { '*': string }; Body: Record<string, string> | undefined }>(
      `${SECRET_PATH_PREFIX}*`,
      { config: { auth: 'public', secretPath: true }, bodyLimit: FORM_LIMIT, schema: { hide: true } },
      async (request, reply) => {
        const token = request.params['*'];
        const form = request.body ?? {};
        // The form repeats the token; a different one is not this link's form.
        if (form.token !== undefined && form.token !== token) return send(reply, { state: 'unknown', status: 404 }, token);
        const feedback = typeof form.feedback === 'string' ? form.feedback.slice(0, 64 * 1024) : undefined;
        return send(reply, await deps.links.use(token, request.ip, feedback), token);
      },
    );
  });
}

import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, formatIssuePath, toErrorBody, validationError, type ErrorCode } from '../lib/errors.js';
import { routeOf } from './route-config.js';
import type { RequestLogController } from './request-log-controller.js';
import { REQUEST_ID_HEADER } from './request-id.js';

interface ValidationIssue {
  instancePath: string;
  message?: string;
  keyword?: string;
  params?: { keys?: unknown };
}

/**
 * The only place errors become HTTP responses: always `{error, code, details?}`. Validation
 * failures name the field; 5xx never leaks internals (the stack goes to the log).
 */
export function registerErrorHandler(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError | AppError, request, reply) => {
    const route = routeOf(request);
    const appError = toAppError(err, route.config?.validationCode ?? 'invalid_request', {
      route: route.bodyLimit,
      app: app.initialConfig.bodyLimit,
    });
    // A call met by the shutdown is expected, not a failure to trace.
    if (appError.status >= 500 && appError.code !== 'shutting_down') request.log.error({ err }, 'request failed');
    void reply.code(appError.status).type('application/json').send(toErrorBody(appError));
  });

  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send(toErrorBody(new AppError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`)));
  });
}

/**
 * Fastify's `frameworkErrors` option: URLs it cannot route at all (bad percent-encoding, a path
 * parameter over its length limit) are answered before any route, hook or error handler runs,
 * by default in fastify's own body shape. Keep `{error, code}` there too.
 */
export function frameworkErrors({ hostRefusal, requestLog }: { hostRefusal: (request: FastifyRequest) => AppError | null; requestLog: RequestLogController }) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // What every answer gets, though no hook runs here: the Host check first, the request's id,
    // the completion line.
    const appError =
      hostRefusal(request) ??
      (err.code === 'FST_ERR_BAD_URL'
        ? new AppError('invalid_request', 'the URL is malformed (bad percent-encoding)')
        : err.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? new AppError('invalid_request', 'params: a path parameter is too long')
          : new AppError('internal_error', 'internal error'));
    void reply.header(REQUEST_ID_HEADER, request.id).code(appError.status).type('application/json').send(toErrorBody(appError));
    requestLog.requestCompleted(null, request, reply);
  };
}

function toAppError(err: FastifyError | AppError, validationCode: ErrorCode, limits: { route: number; app: number | undefined }): AppError {
  if (err instanceof AppError) return err;
  const fe = err as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (Array.isArray(fe.validation)) {
    const context = fe.validationContext === 'body' ? undefined : fe.validationContext === 'querystring' ? 'query' : fe.validationContext;
    const issues = fe.validation.map((v) => ({
      path: v.instancePath
        .split('/')
        .filter(Boolean)
        .map((p) => (/^\d+$/.test(p) ? Number(p) : p)),
      message: v.message ?? 'is invalid',
      code: v.keyword,
      keys: Array.isArray(v.params?.keys) ? v.params.keys : undefined,
    }));
    return validationError(validationCode, issues, context);
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      // Name the limit of this route: JSON bodies take requests.max_body_bytes, blob uploads their own.
      return new AppError(
        'payload_too_large',
        `the request body is larger than the ${limits.route} bytes this endpoint takes${limits.route === limits.app ? ' (requests.max_body_bytes)' : ''}`,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'send the body as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError(validationCode, 'the body is empty: send a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError(validationCode, `the body is not valid JSON`);
  }
  // Only a client's body is "not valid JSON": a SyntaxError from anywhere else (a damaged stored row) is our 500.
  if (fe.statusCode === 400 && /JSON/i.test(fe.message)) {
    return new AppError(validationCode, 'the body is not valid JSON');
  }
  const status = fe.statusCode ?? 500;
  if (status === 413) return new AppError('payload_too_large', 'the request body is too large');
  if (status === 415) return new AppError('unsupported_media_type', 'unsupported content type');
  if (status >= 400 && status < 500) return new AppError(validationCode, fe.message);
  return new AppError('internal_error', 'internal error');
}

export { formatIssuePath };

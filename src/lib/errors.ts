/**
 * The one error catalogue. Domain code throws `AppError(code, message)`; only the HTTP error
 * handler and the WebSocket routes render it, always as `{error, code, details?}`.
 * Codes are part of the public contract: never rename one.
 */
export const ERRORS = {
  invalid_request: 400,
  invalid_decision: 400,
  invalid_query: 400,
  invalid_frame: 400,
  invalid_rule: 400,
  callback_not_allowed: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  unknown_format: 404,
  method_not_allowed: 405,
  not_pending: 409,
  dedupe_conflict: 409,
  token_exists: 409,
  native_conflict: 409,
  rule_exists: 409,
  rule_in_config: 409,
  content_hash_mismatch: 412,
  payload_too_large: 413,
  quota_exceeded: 413,
  unsupported_media_type: 415,
  unsupported_frame: 422,
  upgrade_required: 426,
  host_not_allowed: 421,
  rate_limited: 429,
  internal_error: 500,
  shutting_down: 503,
  storage_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERRORS;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, details?: unknown, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AppError';
    this.code = code;
    this.status = ERRORS[code];
    this.details = details;
  }
}

/**
 * `unsupported_frame` for a frame that did carry a request countersign cannot take (an
 * encrypted payload, a deadline already past): unlike event noise, which a bridge socket answers
 * with silence, the bridge must hear of it.
 */
export class RequestNotTaken extends AppError {
  constructor(message: string) {
    super('unsupported_frame', message);
  }
}

export interface ErrorBody {
  error: string;
  code: ErrorCode;
  details?: unknown;
}

export function toErrorBody(err: AppError): ErrorBody {
  const body: ErrorBody = { error: err.message, code: err.code };
  if (err.details !== undefined) body.details = err.details;
  return body;
}

/** One issue from a zod (or zod-like) validation, rendered as `path: message`. */
export interface FieldIssue {
  path: ReadonlyArray<PropertyKey>;
  message: string;
  /** zod's issue code; `unrecognized_keys` issues also list the unknown `keys`. */
  code?: string | undefined;
  keys?: ReadonlyArray<unknown> | undefined;
}

export function formatIssuePath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || '(body)';
}

/** Builds the 4xx error for failed validation: the message names the first offending field. */
export function validationError(code: ErrorCode, issues: ReadonlyArray<FieldIssue>, prefix?: string): AppError {
  // zod reports unknown fields on their parent object; name each unknown field itself instead.
  issues = issues.flatMap((i): FieldIssue[] =>
    i.code === 'unrecognized_keys' && i.keys?.length ? i.keys.map((k) => ({ path: [...i.path, String(k)], message: 'unknown field' })) : [i],
  );
  const first = issues[0];
  const where = (p: ReadonlyArray<PropertyKey>) => (!prefix ? formatIssuePath(p) : p.length ? `${prefix}.${formatIssuePath(p)}` : prefix);
  const message = first ? `${where(first.path)}: ${first.message}` : 'invalid input';
  return new AppError(
    code,
    message,
    issues.map((i) => ({ field: where(i.path), message: i.message })),
  );
}

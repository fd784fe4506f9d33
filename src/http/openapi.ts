import type { SwaggerOptions } from '@fastify/swagger';
import type { RouteOptions } from 'fastify';
import { createJsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { ZodType } from 'zod';
import { ERRORS, type ErrorCode } from '../lib/errors.js';
import type { RouteConfig } from './route-config.js';
import { ErrorDoc } from './schemas.js';

/**
 * The OpenAPI document (`GET /v1/openapi.json`), built from the routes themselves:
 *
 * - Schemas named with `.meta({ id })` (schemas.ts) are components, referenced by `$ref`.
 * - A route lists its success responses and, with `errors(...)`, the error codes of its own
 *   logic. What follows from its config is added here, so no route can forget it: 401 unless
 *   public, 403 for admin-only routes, 400 (in the route's validation code) when it validates
 *   params, query or body, 413/415 for JSON bodies, and 500 and 503 `storage_unavailable` everywhere.
 * - `security` and the `x-countersign-auth` extension come from `config.auth`: health and
 *   sign-in are public, everything else takes a bearer token.
 * - `config.openapi` documents what a route parses in its handler rather than by schema (the
 *   native frames of the format routes, their query), without changing what it accepts.
 */

type ErrorResponse = { description: string; content: { 'application/json': { schema: typeof ErrorDoc } } };

/** Which codes an `errors(...)` entry stands for, so the document can name them. */
const declaredCodes = new WeakMap<object, ErrorCode[]>();

/**
 * The error responses a route's own logic can give, by catalogue code:
 * `response: { 200: RequestDoc, ...errors('not_found', 'not_pending') }`.
 */
export function errors(...codes: ErrorCode[]): Record<number, ErrorResponse> {
  const out: Record<number, ErrorResponse> = {};
  for (const [status, group] of byStatus(codes)) {
    const entry = { description: describeCodes(group), content: { 'application/json': { schema: ErrorDoc } } };
    declaredCodes.set(entry, group);
    out[status] = entry;
  }
  return out;
}

const AUTH_TEXT = {
  public: 'Auth: none.',
  submit: 'Auth: the admin token, or a submit token (which sees only its own requests).',
  admin: 'Auth: the admin token.',
  metrics: 'Auth: the admin token, or metrics.token.',
} as const;

/** The @fastify/swagger options: OpenAPI 3.1, bearer auth, and the transforms described above. */
export function openApiOptions(version: string): SwaggerOptions {
  const toJsonSchema = createJsonSchemaTransform({});
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'countersign',
        version,
        description: 'Approval broker API (handup-compatible core). Errors are always {error, code, details?}; codes are listed per response.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'The admin token or a submit token' } } },
      security: [{ bearer: [] }],
    },
    transform: (input) => {
      const route = input.route as RouteOptions & { config?: RouteConfig };
      const config = route.config ?? {};
      const raw = (input.schema ?? {}) as Record<string, unknown>;
      if (raw.hide) return toJsonSchema(input);
      const auth = config.auth ?? 'admin';
      const docOnly = config.openapi ?? {};
      const response = (raw.response ?? {}) as Record<string, object>;
      const own: ErrorCode[] = [];
      const success: Record<string, unknown> = {};
      for (const [status, entry] of Object.entries(response)) {
        const codes = declaredCodes.get(entry);
        if (codes) own.push(...codes);
        // A bare `4xx: ErrorDoc` would document every code of the catalogue with that status:
        // each route names its own, with errors().
        else if (entry === ErrorDoc) throw new Error(`${route.method} ${route.url}: response ${status} is a bare ErrorDoc; name its codes with errors()`);
        else success[status] = entry;
      }
      const schema = {
        ...raw,
        ...(docOnly.params ? { params: docOnly.params } : {}),
        ...(docOnly.querystring ? { querystring: docOnly.querystring } : {}),
        ...(docOnly.body ? { body: docOnly.body } : {}),
        ...(docOnly.consumes ? { consumes: docOnly.consumes } : {}),
        response: success,
        description: [raw.description, AUTH_TEXT[auth]].filter(Boolean).join('\n\n'),
        security: auth === 'public' ? [] : [{ bearer: [] }],
        'x-countersign-auth': auth,
        ...(config.optionalBody ? { [OPTIONAL_BODY]: true } : {}),
      };
      const result = toJsonSchema({ ...input, schema });
      const doc = result.schema as Record<string, unknown> & { response: Record<string, unknown> };
      const all = [...new Set([...own, ...implicitErrors(route, raw, docOnly)])];
      // A status the route answers with a body of its own (health's 503) keeps it.
      for (const [status, group] of byStatus(all)) if (!(String(status) in success)) doc.response[status] = errorResponse(group);
      return result;
    },
    transformObject: (input) =>
      pruneUnusedComponents(optionalBodies(jsonSchemaTransformObject(input) as OpenApiDocument)) as ReturnType<typeof jsonSchemaTransformObject>,
  };
}

/** The errors a route gives because of how it is configured, whatever its handler does. */
function implicitErrors(
  route: RouteOptions & { config?: RouteConfig },
  schema: Record<string, unknown>,
  docOnly: NonNullable<RouteConfig['openapi']>,
): ErrorCode[] {
  const config = route.config ?? {};
  const auth = config.auth ?? 'admin';
  const validation = config.validationCode ?? 'invalid_request';
  const codes: ErrorCode[] = [];
  if (auth !== 'public') codes.push('unauthorized');
  if (auth === 'admin' || auth === 'metrics') codes.push('forbidden');
  if (schema.params || schema.querystring || schema.body) codes.push(validation);
  // A route that takes no body still reads one sent with these methods: refused as any body is.
  const methods = [route.method].flat().map((m) => String(m).toUpperCase());
  const takesBody = schema.body !== undefined || docOnly.body !== undefined || methods.some((m) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(m));
  if (takesBody) {
    codes.push(validation, 'payload_too_large');
    // Raw uploads take any content type; JSON routes refuse others.
    if (!docOnly.consumes) codes.push('unsupported_media_type');
  }
  // Every route but health's own check may find the database unreachable (PostgreSQL restarting).
  codes.push('internal_error', 'storage_unavailable');
  return codes;
}

function byStatus(codes: ErrorCode[]): Map<number, ErrorCode[]> {
  const groups = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const group = groups.get(ERRORS[code]) ?? [];
    if (!group.includes(code)) group.push(code);
    groups.set(ERRORS[code], group);
  }
  return groups;
}

function describeCodes(codes: ErrorCode[]): string {
  return `Error with code ${codes.join(' or ')}`;
}

/** An error response: the Error component, with `code` narrowed to the codes of this status. */
function errorResponse(codes: ErrorCode[]) {
  return {
    description: describeCodes(codes),
    content: {
      'application/json': {
        schema: { allOf: [{ $ref: '#/components/schemas/Error' }, { type: 'object', properties: { code: { type: 'string', enum: codes } } }] },
      },
    },
  };
}

interface OpenApiDocument {
  paths?: unknown;
  components?: { schemas?: Record<string, unknown> } & Record<string, unknown>;
  [key: string]: unknown;
}

// Marks an operation whose body may be left out; swagger makes every requestBody required.
const OPTIONAL_BODY = 'x-countersign-optional-body';

/** `requestBody.required: false` where the route takes no body as `{}` (config.optionalBody). */
function optionalBodies(doc: OpenApiDocument): OpenApiDocument {
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item as Record<string, Record<string, unknown>>)) {
      if (op === null || typeof op !== 'object' || !(OPTIONAL_BODY in op)) continue;
      delete op[OPTIONAL_BODY];
      if (op.requestBody && typeof op.requestBody === 'object') (op.requestBody as { required?: boolean }).required = false;
    }
  }
  return doc;
}

/**
 * Keeps only the components the paths use (directly or through other components): the zod
 * transform emits an input and an output variant of every named schema.
 */
function pruneUnusedComponents(doc: OpenApiDocument): OpenApiDocument {
  const all = doc.components?.schemas ?? {};
  const used = new Set<string>();
  const visit = (value: unknown) => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== 'object') return;
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string' && child.startsWith('#/components/schemas/')) {
        const name = child.slice('#/components/schemas/'.length);
        if (!used.has(name)) {
          used.add(name);
          visit(all[name]);
        }
      } else visit(child);
    }
  };
  visit(doc.paths);
  return { ...doc, components: { ...doc.components, schemas: Object.fromEntries(Object.entries(all).filter(([name]) => used.has(name))) } };
}

/** Documentation-only parts of a route (RouteConfig.openapi). */
export interface RouteDocs {
  params?: ZodType;
  querystring?: ZodType;
  body?: ZodType;
  /** Content types of a body that is not JSON (e.g. raw uploads). */
  consumes?: string[];
}

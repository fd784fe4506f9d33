import type { z } from 'zod';
import { compileCheck } from '../lib/compile-check.js';
import { NO_NUL_PATTERN } from '../lib/no-nul.js';
import {
  CreateRequestSchema,
  KINDS,
  MAX_TITLE_BYTES,
  misleadingOption,
  ON_TIMEOUT,
  OUTCOMES,
  PREVIEW_TYPES,
  RISKS,
  SAFE_ID,
  type CreateRequestBody,
} from './request-schema.js';

/** Strings of at most `maxBytes` of UTF-8, and of at most `max` characters whether counted in code points or UTF-16 units. */
const bytes = (maxBytes: number) => Math.floor(maxBytes / 4);
const units = (max: number) => Math.floor(max / 2);
const nullable = (maxLength?: number) => ({ type: ['string', 'null'], ...(maxLength === undefined ? {} : { maxLength }) });
const text = (maxBytes: number) => nullable(bytes(maxBytes));
const strings = { type: 'array', items: { type: 'string' } };

/**
 * The common create body checked by a validator ajv compiles, before CreateRequestSchema.
 *
 * Why: under load zod's walk over CreateRequestSchema cost about 12 µs per body (2.7 µs in a
 * loop: the walk visits dozens of schema objects, cold once the rest of a request has run),
 * and about a fifth of the daemon's CPU per create went to it. The compiled check is one
 * function.
 *
 * It accepts a strict subset of what CreateRequestSchema accepts, and only bodies that zod
 * returns unchanged (the schema has no defaults or transforms), so a body it accepts is the
 * parse's result as it is. Everything else (questions, a `run_timeout`, server-managed fields,
 * texts near their limits, any mistake) goes through CreateRequestSchema, which alone words the
 * errors. How the subset stays inside the schema:
 * - ajv counts lengths in code points: a byte limit is held at a quarter of it (a code point is
 *   at most four bytes of UTF-8), a character limit at half of it (it holds whether characters
 *   are counted as code points, as zod 4.6 and ajv do, or as UTF-16 units); the title's
 *   bytes are counted exactly;
 * - a title is not blank: `\S`, the complement of what `String.prototype.trim` removes;
 * - `kind: "question"` (which needs `input.questions`) and an `input` other than null are left
 *   to zod, and so are previews with `content` (refused beside `inline`), files, e-mail or sizes,
 *   and a timeout other than "none" or a duration its pattern keeps under a year;
 * - option ids are unique and no option names the other outcome: checked after ajv, as zod's
 *   refinement does.
 * test/unit/create-body-fast-path.test.ts holds every body this accepts against the schema.
 */
const COMMON_CREATE_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['title'],
  properties: {
    // Its byte length is checked exactly below: titles run long, and at a quarter many would miss.
    title: { type: 'string', maxLength: MAX_TITLE_BYTES, pattern: '\\S' },
    tool: text(512),
    callback_url: nullable(units(2048)),
    summary: text(64 * 1024),
    source: {
      type: 'object',
      additionalProperties: false,
      properties: {
        integration: text(256),
        agent: { ...text(256), pattern: NO_NUL_PATTERN },
        session: { ...text(512), pattern: NO_NUL_PATTERN },
        session_title: text(1024),
        cwd: text(4 * 1024),
        repo: text(4 * 1024),
        branch: text(1024),
        host: text(1024),
      },
    },
    kind: { enum: KINDS.filter((k) => k !== 'question') },
    risk: { enum: [...RISKS] },
    previews: {
      type: 'array',
      maxItems: 64,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['type'],
        properties: {
          type: { enum: [...PREVIEW_TYPES] },
          title: nullable(units(512)),
          lang: nullable(units(64)),
          inline: nullable(),
          blob: { type: ['string', 'null'], pattern: '^sha256:[0-9a-f]{64}$' },
          mime: nullable(units(256)),
          name: nullable(units(1024)),
          command: {
            type: ['object', 'null'],
            additionalProperties: false,
            properties: {
              shell: text(64 * 1024),
              argv: { type: ['array', 'null'], items: { type: 'string' } },
              cwd: text(4 * 1024),
              env_keys: strings,
            },
          },
        },
      },
    },
    options: {
      type: 'array',
      minItems: 1,
      maxItems: 32,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'label', 'outcome'],
        properties: {
          id: { type: 'string', pattern: SAFE_ID.source },
          label: { type: 'string', minLength: 1, maxLength: units(1024) },
          outcome: { enum: [...OUTCOMES] },
          style: nullable(units(32)),
        },
      },
    },
    input: { type: 'null' },
    timeout: { type: ['string', 'null'], pattern: '^(none|[1-9][0-9]{0,2}(ms|s|m|h)|[1-9][0-9]?d)$' },
    on_timeout: { enum: [...ON_TIMEOUT] },
    dedupe_key: { type: ['string', 'null'], minLength: 1, maxLength: units(512), pattern: NO_NUL_PATTERN },
  },
};

const commonShape = compileCheck(COMMON_CREATE_BODY);

/** Unique option ids, none naming the other outcome: what zod's refinement checks and words. */
function plainOptions(options: CreateRequestBody['options']): boolean {
  if (!options) return true;
  if (options.some((o) => misleadingOption(o) !== null)) return false;
  return options.length < 2 || new Set(options.map((o) => o.id)).size === options.length;
}

/** Whether `value` is a create body of the common shape: CreateRequestSchema would accept it unchanged. */
export function isCommonCreateBody(value: unknown): value is CreateRequestBody {
  return commonShape(value) && Buffer.byteLength((value as CreateRequestBody).title) <= MAX_TITLE_BYTES && plainOptions((value as CreateRequestBody).options);
}

/** CreateRequestSchema.safeParse, without zod's walk for a body of the common shape. */
export function parseCreateBody(value: unknown): z.ZodSafeParseResult<CreateRequestBody> {
  return isCommonCreateBody(value) ? { success: true, data: value } : CreateRequestSchema.safeParse(value);
}

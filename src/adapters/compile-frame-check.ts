import { Ajv, type AnySchema } from 'ajv';

const ajv = new Ajv({ allowUnionTypes: true });

/**
 * A validator ajv compiles from a JSON Schema: one generated function, where zod walks dozens of
 * schema objects per frame (cold under load, a fifth of a PaperClip request's CPU). Adapters use
 * it for `isCommonFrame`, a strict subset of their zod frame schema.
 */
export function compileFrameCheck(schema: AnySchema): (value: unknown) => boolean {
  return ajv.compile(schema);
}

/** A string zod's `.min(min).max(max)` accepts: both count code points. */
export const textOf = (max: number, min = 1) => ({ type: 'string', minLength: min, maxLength: max });

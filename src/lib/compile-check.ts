import { Ajv, type AnySchema } from 'ajv';

const ajv = new Ajv({ allowUnionTypes: true });

/**
 * A validator ajv compiles from a JSON Schema: one generated function, where zod walks dozens of
 * schema objects per value (cold under load: a fifth of a create's CPU, of a PaperClip frame's).
 * The fast paths in front of zod use it: the create body's (src/requests/create-body-fast-path.ts)
 * and the adapters' `isCommonFrame`, each a strict subset of its zod schema.
 */
export function compileCheck(schema: AnySchema): (value: unknown) => boolean {
  return ajv.compile(schema);
}

/** A string zod's `.min(min).max(max)` accepts: both count code points. */
export const textOf = (max: number, min = 1) => ({ type: 'string', minLength: min, maxLength: max });

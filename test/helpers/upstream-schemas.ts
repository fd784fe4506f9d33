import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { expect } from 'vitest';

/** Upstream schemas, vendored (see test/schemas/README.md for where each came from). */
export const SCHEMAS_DIR = join(import.meta.dirname, '..', 'schemas');

export function loadSchema(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(SCHEMAS_DIR, file), 'utf8')) as Record<string, unknown>;
}

// ajv-formats ships as CommonJS; its default export arrives wrapped under ESM.
const addFormats = (addFormatsPlugin as unknown as { default?: typeof addFormatsPlugin }).default ?? addFormatsPlugin;

/**
 * An Ajv for draft 2020-12 that checks the standard formats (uuid, date-time, ...). The
 * upstream schemas also use Rust-style formats (uint64, int32, uint) that carry no constraint
 * beyond `minimum`, so those are declared as known and not checked.
 */
export function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  for (const f of ['uint64', 'int64', 'int32', 'uint32', 'uint', 'uint8', 'uint16', 'double', 'float']) ajv.addFormat(f, true);
  return ajv;
}

const ajv = newAjv();

/** A validator for one vendored schema; compiled once per process (test files share workers). */
export function compileSchema(file: string) {
  const schema = loadSchema(file);
  const id = typeof schema.$id === 'string' ? schema.$id : undefined;
  return (id && ajv.getSchema(id)) || ajv.compile(schema);
}

const validateRequest = compileSchema('handup-request.schema.json');

/** Asserts `value` is a valid handup Request (the upstream JSON Schema, draft 2020-12). */
export function expectValidRequest(value: unknown): void {
  const ok = validateRequest(value);
  expect(ok ? [] : validateRequest.errors, `not a valid handup Request: ${JSON.stringify(value).slice(0, 400)}`).toEqual([]);
}

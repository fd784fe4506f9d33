import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { expect } from 'vitest';

/** The shared/ folder sits beside the project checkout. */
export const SHARED_DIR = join(import.meta.dirname, '..', '..', '..', 'shared');

export function loadSchema(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(SHARED_DIR, 'schemas', file), 'utf8')) as Record<string, unknown>;
}

// The upstream schemas use Rust-style formats (uint64, int32, uint); they carry no constraint
// beyond `minimum`, so they are declared as known and not checked.
const ajv = new Ajv2020({ allErrors: true, strict: false });
// ajv-formats ships as CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsPlugin as unknown as { default?: typeof addFormatsPlugin }).default ?? addFormatsPlugin);
addFormats(ajv);
for (const f of ['uint64', 'int64', 'int32', 'uint32', 'uint', 'uint8', 'uint16', 'double', 'float']) ajv.addFormat(f, true);

export function compileSchema(file: string) {
  return ajv.compile(loadSchema(file));
}

const validateRequest = compileSchema('handup-request.schema.json');

/** Asserts `value` is a valid handup Request (the upstream JSON Schema, draft 2020-12). */
export function expectValidRequest(value: unknown): void {
  const ok = validateRequest(value);
  expect(ok ? [] : validateRequest.errors, `not a valid handup Request: ${JSON.stringify(value).slice(0, 400)}`).toEqual([]);
}

import { describe, expect, it } from 'vitest';
import { jsonValueProblem, parseJson, MAX_JSON_DEPTH } from '../../src/http/json-body-parser.js';

/** Nests `value` inside `levels` arrays. */
function nest(levels: number, value: unknown = 1): unknown {
  let v = value;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

describe('jsonValueProblem', () => {
  it('accepts ordinary JSON, including well-formed astral characters', () => {
    expect(jsonValueProblem({ title: 'deploy 🚀', input: { a: [1, null, true, { ключ: 'значение' }] } })).toBeNull();
    expect(jsonValueProblem(null)).toBeNull();
    expect(jsonValueProblem('😀')).toBeNull();
  });

  it(`accepts ${MAX_JSON_DEPTH} levels of nesting and refuses one more, naming the top-level field`, () => {
    // The body object is one level, input another: MAX_JSON_DEPTH containers in all.
    expect(jsonValueProblem({ input: nest(MAX_JSON_DEPTH - 1) })).toBeNull();
    expect(jsonValueProblem({ input: nest(MAX_JSON_DEPTH) })).toBe(`input: nested deeper than ${MAX_JSON_DEPTH} levels`);
    expect(jsonValueProblem(nest(200_000))).toBe(`[0]: nested deeper than ${MAX_JSON_DEPTH} levels`);
  });

  it.each([
    ['a lone high surrogate', { title: 'a\uD800b' }, 'title'],
    ['a lone high surrogate at the end', { title: 'a\uD800' }, 'title'],
    ['a lone low surrogate', { previews: [{ inline: '\uDC00' }] }, 'previews[0].inline'],
    ['a reversed pair', { summary: '\uDC00\uD800' }, 'summary'],
    ['a bad key', { input: { '\uD83D': 1 } }, 'input'],
  ])('refuses %s, naming the field', (_name, value, path) => {
    expect(jsonValueProblem(value)).toMatch(new RegExp(`^${path.replace(/[[\]]/g, '\\$&')}: .*valid Unicode`));
  });

  it('refuses integers beyond 2^53, which the parse rounds, and keeps every one up to it', () => {
    expect(jsonValueProblem(JSON.parse('{"a": [9007199254740993]}'))).toMatch(/^a\[0\]: the integer is too large to keep exactly/);
    expect(jsonValueProblem(JSON.parse('{"a": -9007199254740993}'))).toMatch(/^a: the integer is too large/);
    expect(jsonValueProblem(JSON.parse('{"a": [9007199254740991, -9007199254740991, 1.5e-300, 0.1]}'))).toBeNull();
  });

  it('reads the text: a large float written with an exponent or a fraction is no integer, nor are digits inside a string', () => {
    for (const text of ['{"a": 1.5e17}', '{"a": 1e16}', '{"a": 1.0e20}', '{"a": 12345678901234567.5}', '{"s": "9007199254740993", "a": 1.5E+17}']) {
      expect(parseJson(text), text).toMatchObject({ ok: true });
    }
    expect(parseJson('{"s": "1.5e17 \\" x", "a": [1.5e17, 9007199254740993]}')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^a\[1\]: the integer is too large to keep exactly/),
    });
    expect(parseJson('{"a": -12345678901234567890}')).toMatchObject({ ok: false, message: expect.stringMatching(/^a: the integer is too large/) });
    // However long: digits written out past 1e21 are rounded just the same.
    expect(parseJson('{"n": 123456789012345678901234}')).toMatchObject({ ok: false, message: expect.stringMatching(/^n: the integer is too large/) });
    expect(parseJson('{"n": 1.2345678901234568e+23}')).toMatchObject({ ok: true });
  });

  it('refuses numbers beyond float64 (JSON.parse reads 1e400 as Infinity), naming the field', () => {
    expect(jsonValueProblem(JSON.parse('{"input": {"n": [1, 1e400]}}'))).toBe('input.n[1]: the number is too large (out of the float64 range)');
    expect(jsonValueProblem(JSON.parse('{"n": -1e400}'))).toMatch(/^n: /);
    expect(jsonValueProblem({ n: 1.5e300, m: -0, k: 5e-324 })).toBeNull();
  });
});

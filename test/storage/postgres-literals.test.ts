import { describe, expect, it } from 'vitest';
import { inlineParams, sqlLiteral } from '../../src/storage/postgres/postgres-runner.js';

describe('SQL text for deferred PostgreSQL statements', () => {
  it('quotes strings, doubling quotes and escaping backslashes', () => {
    expect(sqlLiteral("it's")).toBe("'it''s'");
    expect(sqlLiteral('a\\b')).toBe(" E'a\\\\b'");
    expect(sqlLiteral('')).toBe("''");
  });

  it('writes numbers, booleans and NULL as SQL, and refuses anything else', () => {
    expect(sqlLiteral(42)).toBe('42');
    expect(sqlLiteral(-1.5e-7)).toBe('-1.5e-7');
    expect(sqlLiteral(true)).toBe('TRUE');
    expect(sqlLiteral(null)).toBe('NULL');
    expect(sqlLiteral(undefined)).toBe('NULL');
    expect(() => sqlLiteral(Number.NaN)).toThrow();
    expect(() => sqlLiteral(Infinity)).toThrow();
    expect(() => sqlLiteral({ a: 1 })).toThrow();
    expect(() => sqlLiteral(10n)).toThrow();
  });

  it('replaces placeholders outside quoted text only, once each, with no value read as SQL', () => {
    expect(inlineParams("INSERT INTO t (a, b, c) VALUES (?, '?', ?)", ["x'); DROP TABLE t; --", '?'])).toBe(
      "INSERT INTO t (a, b, c) VALUES ('x''); DROP TABLE t; --', '?', '?')",
    );
  });

  it('refuses a value count that does not match the placeholders', () => {
    expect(() => inlineParams('SELECT ?, ?', [1])).toThrow();
    expect(() => inlineParams('SELECT ?', [1, 2])).toThrow();
  });
});

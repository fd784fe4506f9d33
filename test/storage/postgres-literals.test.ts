import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { inlineParams, sqlLiteral } from '../../src/storage/postgres/postgres-runner.js';

describe('SQL text for deferred PostgreSQL statements', () => {
  it('quotes strings, doubling quotes and escaping backslashes', () => {
    expect(sqlLiteral("it's")).toBe("'it''s'");
    expect(sqlLiteral('a\\b')).toBe(" E'a\\\\b'");
    expect(sqlLiteral('')).toBe("''");
  });

  it('writes every string exactly as the driver would escape it', () => {
    // A fixed-seed mix of quotes, backslashes, placeholders, newlines and non-ASCII text.
    const alphabet = ["'", '\\', '?', '"', 'a', ' ', '\n', 'é', '😀', '$', ';', 'E'];
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647);
    for (let n = 0; n < 2000; n++) {
      let text = '';
      for (let i = next() % 40; i > 0; i--) text += alphabet[next() % alphabet.length];
      expect(sqlLiteral(text)).toBe(pg.escapeLiteral(text));
    }
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

  it('fills the same text again with other values', () => {
    const sql = "UPDATE t SET a = ? WHERE b = ? AND c = '?'";
    expect(inlineParams(sql, [1, 'x'])).toBe("UPDATE t SET a = 1 WHERE b = 'x' AND c = '?'");
    expect(inlineParams(sql, [null, "y'"])).toBe("UPDATE t SET a = NULL WHERE b = 'y''' AND c = '?'");
  });

  it('refuses a value count that does not match the placeholders', () => {
    expect(() => inlineParams('SELECT ?, ?', [1])).toThrow();
    expect(() => inlineParams('SELECT ?', [1, 2])).toThrow();
  });
});

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/lib/canonical-json.js';
import { prng } from '../helpers/prng.js';

const STRINGS = ['', 'a', 'B', 'é', 'ü€', '😀', '"', '\\', '\n\t\r\b\f', '\u0000\u001f', '\u007f', '\u2028\u2029', '</script>', 'x'.repeat(5001) + '"'];
const NUMBERS = [0, -0, 1, -1, 0.1 + 0.2, 1e21, 1e-7, 123456789012345680000, 5e-324, 1.7976931348623157e308, -1e-300, 333333333.3333333];

function randomValue(next: () => number, depth: number): unknown {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  const r = next();
  if (depth > 4 || r < 0.35) return pick<unknown>([...STRINGS, ...NUMBERS, true, false, null, Math.floor(next() * 1e6)]);
  if (r < 0.6) return Array.from({ length: Math.floor(next() * 5) }, () => randomValue(next, depth + 1));
  const out: Record<string, unknown> = {};
  for (let i = Math.floor(next() * 6); i > 0; i--) out[pick([...STRINGS.slice(0, 13), 'b', 'aa', '10', '2', 'Z', '_'])] = randomValue(next, depth + 1);
  return out;
}

function fixtureFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? fixtureFiles(path) : name.endsWith('.json') ? [path] : [];
  });
}

describe('canonical JSON', () => {
  it('writes what the canonicalize package (RFC 8785) writes, for edge-case numbers, strings and key orders', () => {
    const next = prng(8785);
    for (let i = 0; i < 2000; i++) {
      const value = randomValue(next, 0);
      expect(canonicalJson(value), JSON.stringify(value)).toBe(canonicalize(value));
    }
  });

  it('writes what canonicalize writes for every JSON fixture in the repository', () => {
    const files = fixtureFiles(join(import.meta.dirname, '..', 'fixtures'));
    expect(files.length).toBeGreaterThan(20);
    for (const file of files) {
      const value: unknown = JSON.parse(readFileSync(file, 'utf8'));
      expect(canonicalJson(value), file).toBe(canonicalize(value));
    }
  });

  it('sorts keys by UTF-16 code units, not by code points or locale', () => {
    // U+E000 sorts after U+1F600's high surrogate (0xD83D) in UTF-16, before it by code point.
    expect(canonicalJson({ '\ue000': 1, '😀': 2, a: 3, B: 4 })).toBe('{"B":4,"a":3,"😀":2,"\ue000":1}');
  });

  it('drops undefined members as JSON does and refuses cycles', () => {
    expect(canonicalJson({ b: undefined, a: [undefined] })).toBe('{"a":[null]}');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow();
  });
});

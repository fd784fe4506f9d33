import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { adapters } from '../../src/adapters/registry.js';
import { loadFixture, loadFixtures } from '../helpers/fixtures.js';
import { prng } from '../helpers/prng.js';

/**
 * An adapter's `isCommonFrame` lets a frame skip zod's walk, so it must accept only frames its
 * zod frame schema accepts and returns unchanged. Each format's fixture frames are mutated at
 * random (a key dropped or added, a value swapped for another type, for another value seen in
 * the fixtures, or for a string around a limit) and every frame the check accepts is parsed.
 */

const random = prng(20261202);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const chance = (p: number) => random() < p;

// One or two UTF-16 units a code point, and what String.prototype.trim removes.
const LETTERS = ['a', 'Z', '7', 'é', '€', '😀', '-', ':'];
const BLANKS = [' ', '\t', '\n', '\u3000', '\uFEFF', '\u00A0'];
// Around the schemas' limits.
const LENGTHS = [0, 1, 2, 99, 100, 101, 159, 160, 161, 239, 240, 241, 499, 500, 501, 3999, 4000, 4001];

function str(): string {
  const n = chance(0.5) ? Math.floor(random() * 30) : pick(LENGTHS);
  const alphabet = chance(0.1) ? BLANKS : chance(0.2) ? [...LETTERS, ...BLANKS] : pick([['a'], ['😀'], ['€'], LETTERS]);
  const text = Array.from({ length: n }, () => pick(alphabet)).join('');
  // Blanks at the ends, which a trimming schema removes.
  return chance(0.1) ? `${pick(BLANKS)}${text}` : chance(0.1) ? `${text}${pick(BLANKS)}` : text;
}

/** Every string value and key in the format's fixtures: valid values to swap in elsewhere. */
function vocabulary(frames: unknown[]) {
  const values = new Set<string>();
  const keys = new Set<string>(['extra']);
  const walk = (v: unknown) => {
    if (typeof v === 'string') values.add(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        keys.add(k);
        walk(child);
      }
    }
  };
  frames.forEach(walk);
  return { values: [...values], keys: [...keys] };
}

type Vocabulary = ReturnType<typeof vocabulary>;

function anyValue(vocab: Vocabulary): unknown {
  return pick<() => unknown>([
    () => null,
    () => pick([0, -1, 1.5, 2 ** 53, 7, true, false]),
    () => str(),
    () => pick(vocab.values),
    () => randomUUID(),
    () => ({}),
    () => [],
    () => ({ [pick(vocab.keys)]: pick(vocab.values) }),
  ])();
}

/** Every container in `value` with the path to it. */
function containers(value: unknown, into: Array<Record<string, unknown> | unknown[]> = []) {
  if (value !== null && typeof value === 'object') {
    into.push(value as Record<string, unknown>);
    for (const child of Object.values(value)) containers(child, into);
  }
  return into;
}

/** The path to every value in `value` below its root. */
function leafPaths(value: unknown, path: Array<string | number> = [], into: Array<Array<string | number>> = []) {
  if (value !== null && typeof value === 'object') {
    for (const [k, child] of Object.entries(value)) {
      const next = [...path, Array.isArray(value) ? Number(k) : k];
      into.push(next);
      leafPaths(child, next, into);
    }
  }
  return into;
}

function setAt(root: unknown, path: Array<string | number>, v: unknown) {
  let at = root as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
  at[path.at(-1)!] = v;
}

/** One random change somewhere in `frame` (in place). */
function mutate(frame: unknown, vocab: Vocabulary): void {
  const target = pick(containers(frame));
  if (Array.isArray(target)) {
    const action = Math.floor(random() * 4);
    if (action === 0 && target.length > 0) target.splice(Math.floor(random() * target.length), 1);
    else if (action === 1 && target.length > 0) target.push(structuredClone(pick(target)));
    else if (action === 2 && target.length > 0) target[Math.floor(random() * target.length)] = anyValue(vocab);
    else target.length = 0;
    return;
  }
  const keys = Object.keys(target);
  const action = Math.floor(random() * 5);
  if (action === 0 && keys.length > 0) delete target[pick(keys)];
  else if (action === 1) target[pick(vocab.keys)] = anyValue(vocab);
  else if (keys.length > 0) {
    const key = pick(keys);
    target[key] = action === 2 ? str() : action === 3 ? pick(vocab.values) : anyValue(vocab);
  }
}

const checked = adapters.filter((a) => a.isCommonFrame && a.format !== 'handup');

describe('common frame checks (isCommonFrame)', () => {
  it('are given by the formats whose frame schemas cost the most', () => {
    expect(checked.map((a) => a.format).sort()).toEqual(['paperclip', 'roll']);
  });

  describe.each(checked.map((a) => [a.format, a] as const))('%s', (format, adapter) => {
    const seeds = loadFixtures(format)
      .filter(([, fx]) => fx.kind === 'request' && fx.frame !== undefined)
      .map(([, fx]) => fx.frame as unknown);
    const vocab = vocabulary(seeds);

    it('takes the frame its e2e fixture sends (the common one)', () => {
      expect(adapter.isCommonFrame!(loadFixture(format, 'e2e-request.json').frame)).toBe(true);
    });

    it('leaves the frame it passes on untouched (the adapter gets the stored frame itself, not a copy)', () => {
      const deepFreeze = (v: unknown): unknown => {
        if (v !== null && typeof v === 'object') Object.values(Object.freeze(v)).forEach(deepFreeze);
        return v;
      };
      const common = loadFixtures(format).filter(([, fx]) => fx.kind === 'request' && fx.frame !== undefined && adapter.isCommonFrame!(fx.frame));
      expect(common.length).toBeGreaterThan(0);
      for (const [, fx] of common) {
        const frame = deepFreeze(structuredClone(fx.frame));
        // A frozen object throws on any write in strict code: normalising must only read the frame.
        try {
          adapter.normalize(frame, { query: fx.query ?? {} });
        } catch (err) {
          expect(err).not.toBeInstanceOf(TypeError);
        }
      }
    });

    /** Whether the check and the schema agree on `frame`; the frame when they do not. */
    function disagreement(frame: unknown): string | null {
      if (!adapter.isCommonFrame!(frame)) return null;
      const parsed = adapter.frameSchema.safeParse(frame);
      return parsed.success && isDeepStrictEqual(parsed.data, frame) ? null : JSON.stringify(frame).slice(0, 600);
    }

    it('holds every value of its frames at each limit, in the widest characters, and no further', () => {
      const odd: unknown[] = [null, 0, -1, 1.5, 2 ** 53, true, {}, [], '', ' ', 'a\n'];
      for (const alphabet of ['a', '😀', '€']) {
        for (const n of LENGTHS) odd.push(alphabet.repeat(n), ` ${alphabet.repeat(n)}`, `${alphabet.repeat(n)}\u3000`);
      }
      let common = 0;
      for (const seed of seeds.filter((f) => adapter.isCommonFrame!(f))) {
        for (const path of leafPaths(seed)) {
          for (const v of odd) {
            const frame = structuredClone(seed);
            setAt(frame, path, v);
            if (adapter.isCommonFrame!(frame)) common++;
            expect(disagreement(frame)).toBeNull();
          }
        }
      }
      expect(common).toBeGreaterThan(100);
    });

    it('accepts only frames the zod schema accepts, and returns them as it would', () => {
      let common = 0;
      let refused = 0;
      for (let i = 0; i < 6_000; i++) {
        const frame = structuredClone(pick(seeds));
        const changes = chance(0.1) ? 0 : 1 + Math.floor(random() * 3);
        for (let c = 0; c < changes; c++) mutate(frame, vocab);
        const parsed = adapter.frameSchema.safeParse(frame);
        if (!parsed.success) refused++;
        if (!adapter.isCommonFrame!(frame)) continue;
        common++;
        expect(parsed.error?.issues, JSON.stringify(frame).slice(0, 600)).toBeUndefined();
        expect(isDeepStrictEqual(parsed.data, frame), JSON.stringify(frame).slice(0, 600)).toBe(true);
      }
      // Neither side is vacuous: many frames take the fast path, many are refused.
      expect(common).toBeGreaterThan(300);
      expect(refused).toBeGreaterThan(1_000);
    });
  });
});

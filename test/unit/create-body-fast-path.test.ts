import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isCommonCreateBody, parseCreateBody } from '../../src/requests/create-body-fast-path.js';
import { CreateRequestSchema, KINDS, ON_TIMEOUT, PREVIEW_TYPES, RISKS } from '../../src/requests/request-schema.js';
import { prng } from '../helpers/prng.js';

const random = prng(20261201);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const chance = (p: number) => random() < p;

// One to four bytes of UTF-8, one or two UTF-16 units, and what String.prototype.trim removes.
const LETTERS = ['a', 'Z', '7', 'é', '€', '😀', '-', '_', ':', '.'];
const BLANKS = [' ', '\t', '\n', '\u3000', '\uFEFF', '\u00A0'];
// Around every limit of the schema and of the fast path, in bytes, units and code points.
const LENGTHS = [0, 1, 2, 3, 16, 32, 33, 64, 65, 128, 129, 256, 257, 512, 513, 1024, 1025, 2048, 2049, 16384, 16385, 21846, 32768, 65537];

function str(): string {
  const n = chance(0.7) ? Math.floor(random() * 40) : pick(LENGTHS);
  const alphabet = chance(0.1) ? BLANKS : chance(0.2) ? [...LETTERS, ...BLANKS] : pick([['a'], ['😀'], ['€'], ['é'], LETTERS]);
  if (n === 0) return '';
  // n code points (what the fast path counts): whole cycles of a few drawn from the alphabet, then the rest.
  const chars = Array.from({ length: Math.min(n, 24) }, () => pick(alphabet));
  return chars.join('').repeat(Math.floor(n / chars.length)) + chars.slice(0, n % chars.length).join('');
}
const nullableStr = () => (chance(0.15) ? null : str());
/** Now and then a value of the wrong type. */
const orWrong = (make: () => unknown) => () => (chance(0.02) ? pick([42, true, {}, [], 'x'.repeat(3)]) : make());
const sha = () => (chance(0.8) ? `sha256:${'0123456789abcdef'.repeat(4)}` : `sha256:${'A'.repeat(64)}`);

const command = () => ({
  ...(chance(0.7) ? { shell: nullableStr() } : {}),
  ...(chance(0.3) ? { argv: chance(0.2) ? null : [str(), str()] } : {}),
  ...(chance(0.3) ? { cwd: nullableStr() } : {}),
  ...(chance(0.2) ? { env_keys: [str()] } : {}),
  ...(chance(0.03) ? { extra: 1 } : {}),
});
const preview = () => ({
  type: chance(0.95) ? pick(PREVIEW_TYPES) : 'video-call',
  ...(chance(0.3) ? { title: nullableStr() } : {}),
  ...(chance(0.2) ? { lang: nullableStr() } : {}),
  ...(chance(0.4) ? { inline: nullableStr() } : {}),
  ...(chance(0.1) ? { content: nullableStr() } : {}),
  ...(chance(0.1) ? { blob: sha() } : {}),
  ...(chance(0.1) ? { mime: nullableStr() } : {}),
  ...(chance(0.1) ? { name: nullableStr() } : {}),
  ...(chance(0.05) ? { size: pick([0, 12, -1, 1.5]) } : {}),
  ...(chance(0.4) ? { command: chance(0.1) ? null : command() } : {}),
});
const option = () => ({
  id: chance(0.9) ? pick(['approve', 'deny', 'a.b', 'x:1', 'ok-2']) : pick(['', 'has space', 'a'.repeat(65), '__proto__']),
  label: chance(0.9) ? str() : '',
  outcome: chance(0.95) ? pick(['approve', 'deny']) : 'maybe',
  ...(chance(0.3) ? { style: nullableStr() } : {}),
});

const FIELDS: Record<string, () => unknown> = {
  tool: orWrong(nullableStr),
  callback_url: orWrong(nullableStr),
  summary: orWrong(nullableStr),
  source: orWrong(() =>
    Object.fromEntries(
      ['integration', 'agent', 'session', 'session_title', 'cwd', 'repo', 'branch', 'host', ...(chance(0.03) ? ['pid'] : [])]
        .filter(() => chance(0.4))
        .map((k) => [k, nullableStr()]),
    ),
  ),
  kind: orWrong(() => pick(KINDS)),
  risk: orWrong(() => pick(RISKS)),
  previews: orWrong(() => Array.from({ length: pick([0, 1, 2, 65]) }, preview)),
  options: orWrong(() => Array.from({ length: pick([0, 1, 2, 3, 33]) }, option)),
  input: orWrong(() => (chance(0.5) ? null : { questions: [{ id: 'q', question: 'Which?', allow_free_text: true }] })),
  timeout: orWrong(() => pick([null, 'none', '30s', '10m', '999h', '99d', '0s', '1000h', '2w', ' 5m', '5', str()])),
  run_timeout: orWrong(() => pick([null, '10m'])),
  on_timeout: orWrong(() => pick([...ON_TIMEOUT, 'later'])),
  dedupe_key: orWrong(nullableStr),
  id: orWrong(str),
  status: orWrong(() => 'pending'),
  unknown_field: orWrong(str),
};

function body(): Record<string, unknown> {
  const b: Record<string, unknown> = {};
  if (chance(0.97)) b.title = chance(0.03) ? 42 : str();
  for (const [key, make] of Object.entries(FIELDS)) {
    const p = key === 'unknown_field' || key === 'id' || key === 'status' || key === 'run_timeout' ? 0.02 : 0.3;
    if (chance(p)) b[key] = make();
  }
  return b;
}

const benchBody = {
  title: 'Run migration 5',
  summary: 'Benchmark request',
  kind: 'command',
  risk: 'low',
  dedupe_key: 'uniq-5',
  source: { agent: 'bench', session: 'bench-session' },
  previews: [{ type: 'command', command: { shell: 'echo hello' } }],
};

describe('the create body fast path', () => {
  it('accepts only bodies CreateRequestSchema accepts, and returns them as the schema would', () => {
    let common = 0;
    let invalid = 0;
    let long = 0;
    for (let i = 0; i < 5_000; i++) {
      const b = body();
      const parsed = CreateRequestSchema.safeParse(b);
      if (!parsed.success) invalid++;
      if (!isCommonCreateBody(b)) continue;
      common++;
      if (JSON.stringify(b).length > 400) long++;
      expect(parsed.error?.issues, JSON.stringify(b).slice(0, 400)).toBeUndefined();
      expect(parsed.data).toStrictEqual(b);
    }
    // Neither side is vacuous: many bodies take the fast path, many are refused.
    expect(common).toBeGreaterThan(800);
    expect(long).toBeGreaterThan(50);
    expect(invalid).toBeGreaterThan(1_000);
  });

  it('holds each text at its limit in the widest characters, and no further', () => {
    // [limit in code points, body with that text]; a code point is 4 bytes of UTF-8 or 2 units here.
    const texts: Array<[number, (v: string) => unknown]> = [
      [128, (v) => ({ ...benchBody, title: v })],
      [128, (v) => ({ ...benchBody, tool: v })],
      [1024, (v) => ({ ...benchBody, callback_url: v })],
      [16384, (v) => ({ ...benchBody, summary: v })],
      [64, (v) => ({ ...benchBody, source: { integration: v, agent: v } })],
      [128, (v) => ({ ...benchBody, source: { session: v } })],
      [256, (v) => ({ ...benchBody, source: { session_title: v, branch: v, host: v } })],
      [1024, (v) => ({ ...benchBody, source: { cwd: v, repo: v } })],
      [256, (v) => ({ ...benchBody, previews: [{ type: 'text', title: v }] })],
      [32, (v) => ({ ...benchBody, previews: [{ type: 'code', lang: v }] })],
      [128, (v) => ({ ...benchBody, previews: [{ type: 'file', mime: v }] })],
      [512, (v) => ({ ...benchBody, previews: [{ type: 'file', name: v }] })],
      [16384, (v) => ({ ...benchBody, previews: [{ type: 'command', command: { shell: v } }] })],
      [1024, (v) => ({ ...benchBody, previews: [{ type: 'command', command: { cwd: v } }] })],
      [512, (v) => ({ ...benchBody, options: [{ id: 'go', label: v, outcome: 'approve' }] })],
      [16, (v) => ({ ...benchBody, options: [{ id: 'go', label: 'Go', outcome: 'approve', style: v }] })],
      [256, (v) => ({ ...benchBody, dedupe_key: v })],
    ];
    for (const [limit, make] of texts) {
      const at = make('😀'.repeat(limit));
      expect(isCommonCreateBody(at), JSON.stringify(at).slice(0, 120)).toBe(true);
      expect(CreateRequestSchema.parse(at)).toStrictEqual(at);
      const past = make('😀'.repeat(limit + 1));
      expect(isCommonCreateBody(past), JSON.stringify(past).slice(0, 120)).toBe(false);
      expect(parseCreateBody(past)).toStrictEqual(CreateRequestSchema.safeParse(past));
    }
  });

  it('refuses what the schema refuses near its limits: bytes, blank titles, duplicate option ids, questions', () => {
    const refused = [
      { ...benchBody, title: '€'.repeat(171) }, // 513 bytes
      { ...benchBody, title: ' \u3000\t' },
      { ...benchBody, title: '\uFEFF' },
      {
        ...benchBody,
        options: [
          { id: 'a', label: 'A', outcome: 'approve' },
          { id: 'a', label: 'B', outcome: 'deny' },
        ],
      },
      { ...benchBody, kind: 'question' },
      { ...benchBody, kind: 'info', input: {} },
      { ...benchBody, dedupe_key: '😀'.repeat(257) }, // 514 UTF-16 units
      { ...benchBody, previews: [{ type: 'text', inline: 'a', content: 'b' }] },
      { ...benchBody, timeout: '53w' },
      { ...benchBody, __proto__: { polluted: true } },
      JSON.parse('{"title":"x","__proto__":{"polluted":true}}'),
      { ...benchBody, extra: 1 },
    ];
    for (const b of refused) {
      expect(isCommonCreateBody(b), JSON.stringify(b).slice(0, 200)).toBe(false);
      expect(parseCreateBody(b).success).toBe(CreateRequestSchema.safeParse(b).success);
    }
  });

  it('leaves what it does not take to the schema: the same result, the same errors', () => {
    const bodies = [
      { ...benchBody, timeout: '2w' },
      { ...benchBody, kind: 'question', input: { questions: [{ id: 'q', question: 'Which?', allow_free_text: true }] } },
      { ...benchBody, summary: '€'.repeat(16385) }, // 49,155 bytes: valid, beyond the fast path's quarter
      { ...benchBody, title: '' },
      { ...benchBody, risk: 'extreme', options: [] },
    ];
    for (const b of bodies) {
      expect(isCommonCreateBody(b)).toBe(false);
      expect(parseCreateBody(b)).toStrictEqual(CreateRequestSchema.safeParse(b));
    }
  });

  it('takes the common shapes: the benchmark body, and the handup fixtures it can', () => {
    expect(isCommonCreateBody(benchBody)).toBe(true);
    // A title's bytes are counted exactly: 510 bytes in 170 code points is taken.
    expect(isCommonCreateBody({ ...benchBody, title: '€'.repeat(170) })).toBe(true);
    expect(parseCreateBody(benchBody)).toStrictEqual({ success: true, data: benchBody });
    const dir = join(import.meta.dirname, '..', 'fixtures', 'handup');
    let taken = 0;
    for (const file of readdirSync(dir)) {
      const fixture = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { frame?: unknown };
      if (!isCommonCreateBody(fixture.frame)) continue;
      taken++;
      expect(CreateRequestSchema.parse(fixture.frame), file).toStrictEqual(fixture.frame);
    }
    expect(taken).toBeGreaterThan(3);
  });
});

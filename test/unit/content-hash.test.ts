import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { contentHash, sameContentHash } from '../../src/requests/content-hash.js';
import { draftFromBody } from '../../src/requests/request-draft.js';
import { CreateRequestSchema } from '../../src/requests/request-schema.js';

/** The hash of a request as the service computes it: from the draft, after defaults. */
function hashOf(body: Record<string, unknown>): string {
  const draft = draftFromBody(CreateRequestSchema.parse(body), { defaultTimeout: 'none', integration: null });
  return contentHash(draft);
}

const sha = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

const BASE = {
  title: 'Deploy',
  summary: 'to staging',
  kind: 'command',
  previews: [{ type: 'command', command: { argv: ['make', 'deploy'] } }],
  options: [
    { id: 'go', label: 'Go', outcome: 'approve' },
    { id: 'stop', label: 'Stop', outcome: 'deny' },
  ],
  input: { tool_input: { b: 2, a: 1 } },
  callback_url: 'https://hooks.example.com/x',
};

describe('content hash', () => {
  it('is sha256 over the RFC 8785 canonical JSON of the hashed fields, after defaults', () => {
    const expected =
      '{"callback_url":null,"input":null,"kind":"custom",' +
      '"options":[{"id":"approve","label":"Approve","outcome":"approve","style":"primary"},{"id":"deny","label":"Deny","outcome":"deny","style":"danger"}],' +
      '"previews":[],"summary":null,"title":"x"}';
    expect(hashOf({ title: 'x' })).toBe(sha(expected));
  });

  it('sorts keys by UTF-16 code units and keeps non-ASCII text unescaped', () => {
    const expected =
      '{"callback_url":null,"input":{"B":1,"a":2,"é":"ü€"},"kind":"custom",' +
      '"options":[{"id":"approve","label":"Approve","outcome":"approve","style":"primary"},{"id":"deny","label":"Deny","outcome":"deny","style":"danger"}],' +
      '"previews":[],"summary":null,"title":"x"}';
    expect(hashOf({ title: 'x', input: { é: 'ü€', a: 2, B: 1 } })).toBe(sha(expected));
  });

  it('is stable and independent of key order at every level', () => {
    const h = hashOf(BASE);
    expect(hashOf(BASE)).toBe(h);
    expect(h).toMatch(/^sha256:[0-9a-f]{64}$/);
    const reordered = {
      callback_url: BASE.callback_url,
      input: { tool_input: { a: 1, b: 2 } },
      options: BASE.options.map(({ outcome, label, id }) => ({ outcome, label, id })),
      previews: [{ command: { argv: ['make', 'deploy'] }, type: 'command' }],
      kind: 'command',
      summary: 'to staging',
      title: 'Deploy',
    };
    expect(hashOf(reordered)).toBe(h);
  });

  it.each([
    ['title', { title: 'Deploy!' }],
    ['summary', { summary: 'to prod' }],
    ['summary (null)', { summary: null }],
    ['kind', { kind: 'edit' }],
    ['previews', { previews: [{ type: 'command', command: { argv: ['make', 'destroy'] } }] }],
    [
      'previews (order)',
      {
        previews: [
          { type: 'text', inline: 'a' },
          { type: 'text', inline: 'b' },
        ],
      },
    ],
    [
      'options',
      {
        options: [
          { id: 'go', label: 'Go now', outcome: 'approve' },
          { id: 'stop', label: 'Stop', outcome: 'deny' },
        ],
      },
    ],
    ['option order', { options: [...BASE.options].reverse() }],
    ['input', { input: { tool_input: { a: 1, b: 3 } } }],
    ['callback_url', { callback_url: 'https://hooks.example.com/y' }],
  ])('changes with %s', (_field, change) => {
    expect(hashOf({ ...BASE, ...change })).not.toBe(hashOf(BASE));
  });

  it.each([
    ['risk', { risk: 'high' }],
    ['source', { source: { agent: 'codex', session: 's', repo: 'r' } }],
    ['timeout', { timeout: '5m' }],
    ['on_timeout', { on_timeout: 'approve' }],
    ['dedupe_key', { dedupe_key: 'k' }],
    ['tool', { tool: 'Bash' }],
  ])('does not change with %s', (_field, change) => {
    expect(hashOf({ ...BASE, ...change })).toBe(hashOf(BASE));
  });

  it('hashes the content alias like inline, since both are what the reviewer sees', () => {
    expect(hashOf({ title: 'x', previews: [{ type: 'text', content: 'hi' }] })).toBe(hashOf({ title: 'x', previews: [{ type: 'text', inline: 'hi' }] }));
  });

  it('hashes info notices with their forced options', () => {
    expect(hashOf({ title: 'x', kind: 'info', options: [{ id: 'a', label: 'A', outcome: 'approve' }] })).toBe(hashOf({ title: 'x', kind: 'info' }));
  });
});

describe('sameContentHash', () => {
  const base = { title: 't', summary: null, kind: 'custom' as const, options: [], input: null, callback_url: null };
  const withJson = (inline: string) => sameContentHash({ ...base, previews: [{ type: 'json', inline }] } as never);
  const written = (value: unknown) => JSON.stringify(value, null, 2);

  it('reads a preview an adapter wrote from a value as that value, whatever the order of its keys', () => {
    expect(withJson(written({ a: 1, b: { c: [1, 2], d: 'x' } }))).toBe(withJson(written({ b: { d: 'x', c: [1, 2] }, a: 1 })));
    expect(withJson(written({ a: [1, 2] }))).not.toBe(withJson(written({ a: [2, 1] })));
  });

  it('compares any other text as text: a repeated key, 1.0, digits past a double, 1e400 are what a person reads', () => {
    for (const [one, other] of [
      ['{"to":"alice"}', '{"to":"mallory","to":"alice"}'],
      ['{"n":1}', '{"n":1.0}'],
      ['{"n":10000000000000000}', '{"n":10000000000000001}'],
      ['{"n":null}', '{"n":1e400}'],
      [written({ to: 'alice' }), written({ to: 'alice' }).replace('"alice"', '"alice", "to": "alice"')],
    ]) {
      expect(withJson(one!), `${one} vs ${other}`).not.toBe(withJson(other!));
    }
  });
});

import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../src/adapters/unified-diff.js';

describe('unifiedDiff', () => {
  it('shows a small replacement as a line diff with context', () => {
    expect(unifiedDiff('src/a.ts', [{ oldText: 'one\ntwo\nthree', newText: 'one\n2\nthree' }])).toBe(
      ['--- a/src/a.ts', '+++ b/src/a.ts', '@@ -1,3 +1,3 @@', ' one', '-two', '+2', ' three', ''].join('\n'),
    );
  });

  it('shows a replacement too large to diff cheaply as every old line removed and every new one added, at once and the same each time', () => {
    const before = 'a\n'.repeat(10_000);
    const after = 'b\n'.repeat(10_000);
    const diff = unifiedDiff('big.txt', [{ oldText: before, newText: after }]);
    const lines = diff.split('\n');
    expect(lines.slice(0, 3)).toEqual(['--- a/big.txt', '+++ b/big.txt', '@@ -1,10000 +1,10000 @@']);
    expect(lines.filter((l) => l === '-a')).toHaveLength(10_000);
    expect(lines.filter((l) => l === '+b')).toHaveLength(10_000);
    expect(unifiedDiff('big.txt', [{ oldText: before, newText: after }])).toBe(diff);
    // Within the line limit but past the edit limit: the same whole replacement.
    const many = Array.from({ length: 1500 }, (_, i) => `line ${i}`).join('\n');
    const other = Array.from({ length: 1500 }, (_, i) => `other ${i}`).join('\n');
    expect(unifiedDiff('m.txt', [{ oldText: many, newText: other }]).split('\n')[2]).toBe('@@ -1,1500 +1,1500 @@');
  });

  it('counts the lines of every replacement of a call against one budget: a MultiEdit of many large edits costs no more than one', () => {
    const big = { oldText: 'a\n'.repeat(2000), newText: 'b\n'.repeat(2000) };
    const diff = unifiedDiff('m.txt', [big, big, { oldText: 'one', newText: 'two' }]);
    const hunks = diff.split('\n').filter((l) => l.startsWith('@@'));
    // The first fits the budget (and is diffed), the second no longer does, nor the third.
    expect(hunks).toEqual(['@@ -1,2000 +1,2000 @@', '@@ -1,2000 +1,2000 @@', '@@ -1 +1 @@']);
    expect(diff.split('\n').slice(-3)).toEqual(['-one', '+two', '']);
  });
});

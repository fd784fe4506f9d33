import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * The `read-only-git` rule the README and docs/policy.md tell operators to enable: it must
 * approve read-only git commands only. `--output` makes `git diff` and `git log` write a file.
 */
describe('the documented read-only-git rule', () => {
  const patterns = ['README.md', 'docs/policy.md'].flatMap((file) =>
    // The final rule of each walk-through (the first draft, `( |$)`, is shown to fail).
    [...readFileSync(file, 'utf8').matchAll(/command: '(\^git \(status\|diff\|log\)\( \(\?![^']+)'/g)].map((m) => ({ file, re: new RegExp(m[1]!, 'u') })),
  );

  it('is in both documents', () => {
    expect(patterns.map((p) => p.file)).toEqual(expect.arrayContaining(['README.md', 'docs/policy.md']));
  });

  it.each(['git status', 'git diff', 'git log -5', 'git log --oneline main..HEAD', 'git diff HEAD -- src/app.ts', 'git log --author=ann@example.com'])(
    'approves %s',
    (command) => {
      for (const p of patterns) expect(p.re.test(command), `${p.file}: ${command}`).toBe(true);
    },
  );

  it.each([
    'git log -p > ../all.patch',
    'git diff --output=../x.patch',
    'git diff --output ../x.patch',
    'git log -p --output=/tmp/leak',
    'git status; rm -rf .',
    'git diff $(cat secret)',
    'git push',
  ])('does not approve %s', (command) => {
    for (const p of patterns) expect(p.re.test(command), `${p.file}: ${command}`).toBe(false);
  });
});

import { cpSync, mkdirSync, readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The build context Docker would send: every file under `root` not excluded by
 * `.dockerignore`. Docker's rules: patterns are relative to the context root (`*.log` matches at
 * the top only, `**` spans directories), a pattern that matches a directory excludes all of it,
 * `!` re-includes, and the last matching pattern wins.
 */
export function dockerignoreRules(root: string): Array<{ re: RegExp; negate: boolean }> {
  const file = join(root, '.dockerignore');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pattern = (negate ? l.slice(1) : l).replace(/^\/+/, '').replace(/\/+$/, '');
      return { re: globToRegExp(pattern), negate };
    });
}

function globToRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      re += '.*';
      i++;
      if (pattern[i + 1] === '/') i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

export function isIgnored(rel: string, rules: Array<{ re: RegExp; negate: boolean }>): boolean {
  const parts = rel.split('/');
  const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const rule of rules) if (candidates.some((c) => rule.re.test(c))) ignored = !rule.negate;
  return ignored;
}

/** Copies the context of `root` into `dest`; returns the relative paths copied. */
export function copyBuildContext(root: string, dest: string): string[] {
  const rules = dockerignoreRules(root);
  const canReinclude = rules.some((r) => r.negate);
  const copied: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      const ignored = isIgnored(path, rules);
      if (entry.isDirectory()) {
        if (ignored && !canReinclude) continue;
        walk(path);
      } else if (!ignored) {
        mkdirSync(dirname(join(dest, path)), { recursive: true });
        cpSync(join(root, path), join(dest, path), { preserveTimestamps: true });
        copied.push(path);
      }
    }
  };
  mkdirSync(dest, { recursive: true });
  walk('');
  return copied;
}

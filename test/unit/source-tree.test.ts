import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { cycles, folderOf, importEdges } from '../helpers/import-graph.js';

/**
 * The source tree reads like its design (docs/development.md, "The source tree"): no two
 * folders of src/ need each other at run time, the linter holds the domain to its layer, and
 * every file a comment names is in the repository.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');

describe('imports between folders', () => {
  const edges = importEdges(SRC);
  const runtime = edges.filter((e) => !e.typeOnly);

  it('finds a cycle when there is one (the check below can fail)', () => {
    expect(
      cycles([
        ['a/', 'b/'],
        ['b/', 'c/'],
        ['c/', 'a/'],
        ['c/', 'd/'],
      ]),
    ).toEqual([['a/', 'b/', 'c/']]);
    expect(
      cycles([
        ['a/', 'b/'],
        ['b/', 'c/'],
      ]),
    ).toEqual([]);
  });

  it('no two folders of src/ import each other at run time', () => {
    // Type-only imports are left out: they vanish at run time, and the store's port speaks in the
    // domain's types (src/storage/request-records.ts names a HandupRequest) by design.
    const folderEdges = runtime.map((e) => [folderOf(e.from), folderOf(e.to)] as const);
    const found = cycles(folderEdges);
    const why = found.map((c) =>
      c
        .map(
          (f) =>
            `${f}: ${runtime
              .filter((e) => folderOf(e.from) === f && c.includes(folderOf(e.to)) && folderOf(e.to) !== f)
              .map((e) => `${e.from} → ${e.to}`)
              .join(', ')}`,
        )
        .join('\n'),
    );
    expect(found, why).toEqual([]);
  });

  it('no module imports itself through others at run time', () => {
    expect(cycles(runtime.map((e) => [e.from, e.to] as const))).toEqual([]);
  });

  it('HTTP, WebSocket and the page build on each other one way: ws and web may use http, never the reverse', () => {
    const between = (a: string, b: string) => edges.filter((e) => folderOf(e.from) === a && folderOf(e.to) === b).map((e) => `${e.from} → ${e.to}`);
    expect(between('http/', 'ws/')).toEqual([]);
    expect(between('http/', 'web/')).toEqual([]);
    expect(between('ws/', 'web/')).toEqual([]);
    expect(between('web/', 'ws/')).toEqual([]);
  });
});

describe('the linter holds the layers (eslint.config.js)', () => {
  const eslint = new ESLint({ cwd: ROOT });
  const refusals = async (filePath: string, code: string) =>
    (await eslint.lintText(code, { filePath: join(ROOT, filePath) }))[0]!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);

  it.each([
    ['src/requests/x.ts', "import { errors } from '../http/openapi.js';", 'HTTP'],
    ['src/adapters/roll/x.ts', "import type { EventsHub } from '../../ws/events-hub.js';", 'HTTP'],
    ['src/policy/x.ts', "import { registerLinkRoutes } from '../web/link-routes.js';", 'HTTP'],
    ['src/formats/x.ts', "import Fastify from 'fastify';", 'HTTP'],
    ['src/requests/x.ts', "import { fetch } from 'undici';", 'HTTP'],
    ['src/formats/x.ts', "import type { Deps } from '../deps.js';", 'wired'],
    ['src/requests/x.ts', "import Database from 'better-sqlite3';", 'store port'],
    ['src/policy/x.ts', "import { sqlRecords } from '../storage/sql/sql-records.js';", 'store port'],
    ['src/http/routes/x.ts', "import { openSqliteStore } from '../../storage/sqlite/sqlite-store.js';", 'store port'],
    ['src/notify/x.ts', "import pg from 'pg';", 'store port'],
    ['src/lib/x.ts', "import type { Config } from '../config.js';", 'leaf'],
  ])('%s: %s is refused', async (file, code, says) => {
    const messages = await refusals(file, code);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(says);
  });

  it.each([
    ['src/requests/x.ts', "import type { Store } from '../storage/store.js';"],
    ['src/http/routes/x.ts', "import { errors } from '../openapi.js';"],
    ['src/storage/x.ts', "import Database from 'better-sqlite3';"],
    ['src/ws/x.ts', "import { parseFormatQuery } from '../http/format-query.js';"],
  ])('%s: %s is allowed', async (file, code) => {
    expect(await refusals(file, code)).toEqual([]);
  });
});

describe('comments name files that exist', () => {
  const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', 'test-artifacts']);
  const all: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) walk(path);
      } else all.push(path);
    }
  };
  walk('');
  const basenames = new Set(all.map((f) => basename(f)));
  const dependencies = Object.keys({
    ...JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).dependencies,
    ...JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).devDependencies,
  });
  // Files that live outside this repository on purpose.
  const ELSEWHERE = new Set(['.claude/settings.json']);
  const FILE = /[\w./<>*{}-]*[\w-]+\.(?:md|ts|js|mjs|json|ya?ml|sql|html|css)\b/g;

  /** Whether `name`, found in a comment of `file`, is a file of the repository. */
  function exists(file: string, name: string): boolean {
    if (/[<>*{}]/.test(name) || name.startsWith('/') || ELSEWHERE.has(name) || dependencies.includes(name)) return true;
    // Build output: dist/x.js is compiled from src/x.ts.
    if (name.startsWith('dist/')) return existsSync(join(ROOT, 'src', name.slice(5).replace(/\.js$/, '.ts')));
    if (existsSync(join(ROOT, name)) || existsSync(join(ROOT, dirname(file), name))) return true;
    // A bare code file name is a module of the tree; documents are cited with their path.
    return !name.includes('/') && !name.endsWith('.md') && basenames.has(name);
  }

  function commentsOf(file: string): string[] {
    const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, readFileSync(join(ROOT, file), 'utf8'));
    const out: string[] = [];
    for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
      if (kind === ts.SyntaxKind.SingleLineCommentTrivia || kind === ts.SyntaxKind.MultiLineCommentTrivia) out.push(scanner.getTokenText());
    }
    return out;
  }

  it('knows a missing one when it sees it (the check below can fail)', () => {
    expect(exists('src/requests/request-service.ts', 'docs/api.md')).toBe(true);
    expect(exists('src/adapters/adapter.ts', 'registry.ts')).toBe(true);
    expect(exists('src/requests/request-service.ts', 'product.md')).toBe(false);
    expect(exists('src/requests/request-service.ts', 'docs/product.md')).toBe(false);
    expect(exists('src/requests/request-service.ts', 'cluster.md')).toBe(false);
  });

  it('in src/, test/, scripts/, bench/ and the page', () => {
    const code = all.filter((f) => /^(src|test|scripts|bench|public)\//.test(f) && /\.(ts|js|mjs)$/.test(f) && !f.startsWith('test/fixtures/'));
    expect(code.length).toBeGreaterThan(300);
    const missing = code.flatMap((file) =>
      commentsOf(file).flatMap((c) =>
        [...c.matchAll(FILE)]
          .map((m) => m[0])
          .filter((name) => !exists(file, name))
          .map((name) => `${file}: ${name}`),
      ),
    );
    expect(missing).toEqual([]);
  });
});

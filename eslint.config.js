import tseslint from 'typescript-eslint';

/**
 * Lint (`npm run lint`, run by `npm test` before the tests). Besides the recommended
 * TypeScript rules, it holds the source tree to its layering:
 * - src/lib/ (errors, clock, ids, durations, logger, …) imports nothing of the daemon;
 * - the domain (src/requests, src/adapters, src/formats, src/policy) never imports HTTP,
 *   WebSocket, the page, MCP, the wiring (app, server, deps), a driver or SQL;
 * - nothing outside src/storage sees SQL or a driver: only the store port.
 * Cycles between folders are checked by test/unit/source-tree.test.ts.
 */

const rx = (regex, message) => ({ regex, message });

const NO_SQL = [
  rx('(^|/)storage/(sqlite|postgres|sql|memory)/', 'SQL and drivers stay behind the store port (src/storage/store.ts)'),
  rx('^(better-sqlite3|pg)$', 'SQL and drivers stay behind the store port (src/storage/store.ts)'),
];
const NO_TRANSPORT = [
  rx('(^|/)(http|ws|web|mcp)/', 'the domain knows nothing of HTTP, WebSocket, the page or MCP'),
  rx('^(fastify|fastify-type-provider-zod|ws|undici)$|^@fastify/|^@modelcontextprotocol/', 'the domain knows nothing of HTTP, WebSocket or MCP'),
  rx('^(\\.\\./)+(app|server|deps)\\.js$', 'the domain is wired from outside (server.ts); it never imports the wiring'),
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test-artifacts/**', 'test/fixtures/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      // `any` is deliberate where it stands (adapter lists of every frame type, test helpers).
      '@typescript-eslint/no-explicit-any': 'off',
      // A leading underscore names what is left out on purpose (`const { a: _a, ...rest } = x`).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Declaration merging into fastify's own interfaces (src/http/route-config.ts).
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/storage/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: NO_SQL }] },
  },
  {
    files: ['src/requests/**/*.ts', 'src/adapters/**/*.ts', 'src/formats/**/*.ts', 'src/policy/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [...NO_SQL, ...NO_TRANSPORT] }] },
  },
  {
    files: ['src/lib/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [rx('^\\.\\./', 'src/lib/ is the leaf of the tree: it imports nothing of the daemon')] }] },
  },
);

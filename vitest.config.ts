import { defineConfig } from 'vitest/config';

/**
 * Three suites. `fast` is `npm test`: everything in-process or with a few child processes, run
 * on every change. `npm run test:all` (and CI) adds `slow` (the Dockerfile's steps in
 * test/deploy/, real browsers, several daemons: files named `*.slow.test.ts`) and, when a
 * PostgreSQL server is at hand (CS_TEST_POSTGRES_URL, which scripts/test-all.mjs sets),
 * `postgres`: the integration tests again, every test daemon on PostgreSQL instead of SQLite.
 */
const SLOW = ['test/deploy/**/*.test.ts', 'test/**/*.slow.test.ts'];
// Pure code (adapters, units) behaves the same whatever the store: no second run.
const STORE_FREE = ['test/adapters/**', 'test/unit/**', 'test/formats/**'];
const postgres = process.env.CS_TEST_POSTGRES_URL?.trim();

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      { extends: true, test: { name: 'fast', include: ['test/**/*.test.ts'], exclude: SLOW, isolate: false } },
      { extends: true, test: { name: 'slow', include: SLOW } },
      ...(postgres
        ? [
            {
              extends: true,
              test: {
                name: 'postgres',
                include: ['test/**/*.test.ts'],
                exclude: [...SLOW, ...STORE_FREE],
                isolate: false,
                env: { CS_TEST_STORE: 'postgres' },
              },
            },
          ]
        : []),
    ],
  },
});

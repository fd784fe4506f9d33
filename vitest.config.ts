import { defineConfig } from 'vitest/config';

/**
 * Two suites. `fast` is `npm test`: everything in-process or with a few child processes, run
 * on every change. `slow` is added by `npm run test:all` (and CI): the Dockerfile's steps
 * (test/deploy/), real browsers, and whatever else is named `*.slow.test.ts` (PostgreSQL,
 * several nodes).
 */
const SLOW = ['test/deploy/**/*.test.ts', 'test/**/*.slow.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      { extends: true, test: { name: 'fast', include: ['test/**/*.test.ts'], exclude: SLOW, isolate: false } },
      { extends: true, test: { name: 'slow', include: SLOW } },
    ],
  },
});

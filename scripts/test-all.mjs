#!/usr/bin/env node
// `npm run test:all`: every suite. The fast and slow suites, plus the integration suite again on
// PostgreSQL: on the server CS_TEST_POSTGRES_URL names, else on a throwaway server
// started here when PostgreSQL is installed (stopped and deleted at the end). Without either,
// the PostgreSQL runs are skipped, and this says so.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findPostgresBin, startPostgresServer } from './postgres-server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const env = { ...process.env };
let server = null;

if (!env.CS_TEST_POSTGRES_URL) {
  if (findPostgresBin()) {
    server = await startPostgresServer({ durable: false, log: (line) => console.log(`test:all: ${line}`) });
    env.CS_TEST_POSTGRES_URL = server.url;
  } else {
    console.log('test:all: PostgreSQL is not installed: the PostgreSQL and multi-node suites are skipped (apt-get install postgresql)');
  }
}

let status = 1;
try {
  const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
  status = spawnSync(process.execPath, [vitest, 'run', ...process.argv.slice(2)], { stdio: 'inherit', env, cwd: root }).status ?? 1;
} finally {
  server?.destroy();
}
process.exit(status);

#!/usr/bin/env node
// `npm start`: build when the compiled output is missing or older than the sources, then serve.
// Migrations run inside `serve`, before it listens.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'dist', 'cli.js');
const stamp = join(root, 'dist', '.tsbuildinfo');

function newestMtime(dir) {
  let newest = 0;
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, name.name);
    newest = Math.max(newest, name.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

if (!existsSync(entry) || !existsSync(stamp) || statSync(stamp).mtimeMs < newestMtime(join(root, 'src'))) {
  // stderr: stdout carries the daemon's log lines only.
  console.error('countersign: building…');
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const built = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

// Run in this process so SIGTERM/SIGINT reach the daemon's graceful shutdown directly.
process.argv = [process.argv[0], entry, 'serve', ...process.argv.slice(2)];
await import(pathToFileURL(entry).href);

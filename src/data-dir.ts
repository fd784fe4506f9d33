import { accessSync, constants, existsSync, mkdirSync, openSync, closeSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './config.js';

/**
 * Makes sure the daemon can create and write its files in `dir` before anything opens them,
 * so an unwritable directory is one clear message (path, user id, fix) instead of a SQLite
 * error. The common case is Docker with a bind mount: the host directory belongs to the host
 * user, the container runs as uid 1000.
 */
export function ensureWritableDataDir(dir: string): void {
  const files = ['countersign.db', 'countersign.db-wal', 'countersign.db-shm', 'countersign.db.lock', 'admin-token'].map((f) => join(dir, f));
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const probe = join(dir, `.write-check-${process.pid}`);
    closeSync(openSync(probe, 'wx', 0o600));
    unlinkSync(probe);
    for (const f of files) if (existsSync(f)) accessSync(f, constants.R_OK | constants.W_OK);
  } catch (err) {
    throw new ConfigError(unwritableMessage(dir, err as NodeJS.ErrnoException));
  }
}

function unwritableMessage(dir: string, err: NodeJS.ErrnoException): string {
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  const who = uid === undefined ? 'this user' : `uid ${uid}`;
  const owner = uid === undefined ? '<user>' : `${uid}:${gid}`;
  return [
    `the data directory ${dir} is not writable by ${who}${gid === undefined ? '' : ` (gid ${gid})`}: ${err.message}`,
    `  fix: give it to ${who} (chown -R ${owner} ${dir}) or set COUNTERSIGN_DATA_DIR to a directory it can write.`,
    `  Docker with a bind mount (-v /host/dir:/data): run "sudo chown -R ${owner} /host/dir" on the host, or use a named volume (-v countersign-data:/data).`,
  ].join('\n');
}

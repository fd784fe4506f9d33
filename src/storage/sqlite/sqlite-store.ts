import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import { basename } from 'node:path';
import Database from 'better-sqlite3';
import { createMemoryRateCounters } from '../memory/memory-rate-counters.js';
import { createSqlRecords } from '../sql/sql-records.js';
import { sqliteDialect } from '../sql/sql-runner.js';
import type { Store, WriteTx } from '../store.js';
import { startSqliteCheckpointer } from './sqlite-checkpointer.js';
import { claimSqliteFile } from './sqlite-file-lock.js';
import { migrateSqlite } from './sqlite-migrate.js';
import { requestKeyError, sqliteStorageError } from './sqlite-errors.js';
import { createSqliteReadRunner, createSqliteRunner } from './sqlite-runner.js';
import { createSqliteWriteQueue } from './sqlite-write-queue.js';
import { openWalFileSync } from './wal-file-sync.js';

export interface SqliteStoreOptions {
  /**
   * `full` (default): nothing is acknowledged before it is on disk (each group commit's WAL is
   * synced, off the event loop: wal-file-sync.ts); `normal` may lose the last commits on power loss.
   */
  synchronous: 'full' | 'normal';
  /** Where errors of after-commit callbacks go (they must not break the write queue). */
  onCallbackError?: (err: unknown) => void;
  /** Where a failed background WAL checkpoint is reported (the next one retries). */
  onCheckpointError?: (err: Error) => void;
}

/**
 * The database holds every request, decision and token digest: owner-only (0600) whatever the
 * umask and however old the data directory. The file is created 0600 before SQLite opens it,
 * because SQLite gives the -wal and -shm files it creates the database file's mode; files an
 * older version left readable are tightened.
 */
function restrictToOwner(path: string) {
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file)) chmodSync(file, 0o600);
  }
}

/**
 * Opens a connection with the settings every write relies on. NORMAL: COMMIT does not fsync the
 * WAL (with `full` the write queue does, off the event loop); checkpoints still sync it first.
 */
function openConnection(path: string, readonly: boolean): Database.Database {
  const db = new Database(path, { timeout: 5000, readonly, fileMustExist: readonly });
  if (!readonly) db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  // Each write of a group commit runs in a savepoint, whose statement journal would otherwise
  // spill to a temporary file past 64 KiB: file writes on every batch that nothing reads back.
  db.pragma('temp_store = MEMORY');
  // SQLite's own lower() folds ASCII only: history's `q` would miss "Étape" even typed exactly.
  // JavaScript's folds the whole of Unicode, as the pattern is folded.
  db.function('lower', { deterministic: true }, (text: unknown) => (typeof text === 'string' ? text.toLowerCase() : text) as string | null);
  return db;
}

/**
 * The SQLite store: one file, one daemon. Writes go through one connection and are
 * group-committed (sqlite-write-queue.ts); reads see only what has committed: on the writer's
 * connection between batches, on a second, read-only connection while a batch is open
 * (sqlite-runner.ts).
 */
export function openSqliteStore(path: string, { synchronous, onCallbackError = () => {}, onCheckpointError = () => {} }: SqliteStoreOptions): Store {
  const claim = claimSqliteFile(path);
  let writer: Database.Database;
  let reader: Database.Database | undefined;
  try {
    restrictToOwner(path);
    writer = openConnection(path, false);
  } catch (err) {
    claim.release();
    throw err;
  }
  try {
    migrateSqlite(writer);
    reader = openConnection(path, true);
  } catch (err) {
    writer.close();
    claim.release();
    throw err;
  }

  // Checkpoints run on a worker thread (sqlite-checkpointer.ts), not inside a COMMIT on the event loop.
  writer.pragma('wal_autocheckpoint = 0');
  const checkpointer = startSqliteCheckpointer(path, { synchronous, onError: onCheckpointError });

  // Whoever used this file before us has stopped (the claim above says so): one daemon per SQLite file.
  writer.prepare('DELETE FROM nodes').run();
  // A file system without WAL support leaves the file in rollback-journal mode: there, COMMIT
  // itself must sync.
  const walMode = writer.pragma('journal_mode', { simple: true }) === 'wal';
  if (synchronous === 'full' && !walMode) writer.pragma('synchronous = FULL');
  const wal = synchronous === 'full' && walMode ? openWalFileSync(path) : null;

  // The last write failed for a full disk or a file it could not write (and none has succeeded
  // since): health answers 503 with it, as it does for a failed sync.
  let unwritable: unknown = null;
  const queue = createSqliteWriteQueue<WriteTx>(
    writer,
    (write) => ({
      requests: written.requests,
      deliveries: written.deliveries,
      tokens: written.tokens,
      blobs: written.blobs,
      webSessions: written.webSessions,
      counters: written.counters,
      mutes: written.mutes,
      bursts: written.bursts,
      notices: written.notices,
      keys: written.keys,
      policy: written.policy,
      // No other daemon shares this file: nobody to tell.
      announce: () => {},
      afterCommit: (cb) => void write.after.push(cb),
    }),
    onCallbackError,
    wal?.sync,
    () => reads.endSnapshot(),
  );
  const written = createSqlRecords(createSqliteRunner(writer), sqliteDialect);
  const reads = createSqliteReadRunner(writer, reader, queue.unsynced);
  const read = createSqlRecords(reads, sqliteDialect);

  const readerDb = reader;
  return {
    requests: read.requests,
    deliveries: read.deliveries,
    tokens: read.tokens,
    blobs: read.blobs,
    webSessions: read.webSessions,
    mutes: read.mutes,
    bursts: read.bursts,
    notices: read.notices,
    keys: read.keys,
    policy: read.policy,
    nodes: {
      beat: (node) => queue.write(() => written.nodes.beat(node)),
      live: read.nodes.live,
      leave: (id) => queue.write(() => written.nodes.leave(id)),
    },
    rates: createMemoryRateCounters(),
    // The driver's errors in the daemon's terms, at the one boundary every write crosses.
    write: async (work, options) => {
      try {
        const result = await queue.write(work, options);
        unwritable = null;
        return result;
      } catch (err) {
        const mapped = sqliteStorageError(err);
        if (/^SQLITE_(FULL|IOERR)/.test(String((err as { code?: unknown } | null)?.code))) unwritable = mapped;
        throw requestKeyError(mapped);
      }
    },
    onRemoteChange: () => () => {},
    info: { kind: 'sqlite', location: basename(path) },
    // The file is opened in-process: it is there as long as the store is, and usable unless a
    // sync has failed.
    ping: async () => {
      const failure = queue.failure() ?? unwritable;
      if (failure) throw failure;
    },
    async close() {
      // A batch may be between its COMMIT and its sync: let it finish before the file goes.
      await queue.idle();
      await checkpointer.stop();
      reads.endSnapshot();
      readerDb.close();
      writer.close();
      wal?.close();
      claim.release();
    },
  };
}

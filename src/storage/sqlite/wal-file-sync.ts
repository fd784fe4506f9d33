import { closeSync, fdatasync, openSync, realpathSync } from 'node:fs';

/**
 * Flushes a database's write-ahead log to disk on libuv's thread pool. The writer runs with
 * synchronous=NORMAL, so COMMIT only hands its WAL frames to the kernel; this fdatasync then
 * makes them durable without holding up the event loop, which goes on parsing and validating the
 * next requests while the disk works. It has the effect synchronous=FULL would have had inside
 * COMMIT: the frames of every transaction committed before the call are on disk when it resolves.
 *
 * The file is opened once: SQLite keeps the same -wal file while any connection is open (the
 * writer's is, for the store's whole life), and PASSIVE checkpoints never truncate or replace it.
 * SQLite puts it beside the database file a symbolic link points to, so the path is resolved.
 */
export function openWalFileSync(databasePath: string) {
  const fd = openSync(`${realpathSync(databasePath)}-wal`, 'r+');
  let closed = false;
  return {
    sync: () =>
      new Promise<void>((resolve, reject) => {
        fdatasync(fd, (err) => (err ? reject(err) : resolve()));
      }),
    close() {
      if (closed) return;
      closed = true;
      closeSync(fd);
    },
  };
}

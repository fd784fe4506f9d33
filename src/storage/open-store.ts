import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

export interface OpenStoreOptions {
  /** This daemon's id in the cluster. */
  node: string;
  log: Logger;
  now: () => number;
}

/**
 * The one place that knows both stores: `storage.url` set to a postgres:// URL opens
 * PostgreSQL, unset opens SQLite at `<data_dir>/countersign.db`.
 */
export async function openStore(config: Readonly<Config>, { node, log, now }: OpenStoreOptions): Promise<Store> {
  const url = config.storage.url;
  if (url) {
    // Loaded only here: a daemon on SQLite never holds the driver (2–3 MB of heap).
    const { openPostgresStore } = await import('./postgres/postgres-store.js');
    return openPostgresStore({ url, poolSize: config.storage.pool_size, node, log: log.child({ module: 'storage' }), now });
  }
  return openSqliteStore(join(config.data_dir, 'countersign.db'), {
    synchronous: config.storage.synchronous,
    onCallbackError: (err) => log.error({ err }, 'an after-commit callback failed'),
    onCheckpointError: (err) => log.warn({ err: err.message }, 'a WAL checkpoint failed; the next one retries'),
  });
}

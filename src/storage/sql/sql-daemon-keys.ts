import type { DaemonKeys } from '../daemon-keys.js';
import type { SqlRunner } from './sql-runner.js';

/** Shared keys over SQL (table `daemon_keys`). */
export function createSqlDaemonKeys(sql: SqlRunner): DaemonKeys {
  const get = async (name: string) => (await sql.get<{ secret: string }>('SELECT secret FROM daemon_keys WHERE name = ?', [name]))?.secret;
  return {
    get,
    async ensure(name, secret, at) {
      // Two daemons starting at once: the first insert wins and both use its key.
      await sql.run('INSERT INTO daemon_keys (name, secret, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [name, secret, at]);
      return (await get(name))!;
    },
    async replace(name, secret, at) {
      await sql.run(
        'INSERT INTO daemon_keys (name, secret, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at',
        [name, secret, at],
      );
    },
  };
}

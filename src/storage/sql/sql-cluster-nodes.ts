import type { ClusterNodes, NodeInfo } from '../cluster-nodes.js';
import type { SqlDialect, SqlRunner } from './sql-runner.js';

/** The heartbeat table over SQL (table `nodes`). */
export function createSqlClusterNodes(sql: SqlRunner, dialect: SqlDialect): ClusterNodes {
  const upsert = `INSERT INTO nodes (id, version, started_at, last_seen) VALUES (?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen, version = excluded.version`;
  return {
    async beat(node) {
      const args = [node.id, node.version, node.started_at, node.last_seen];
      if (dialect.clockMs === null) {
        await sql.run(upsert, args);
        return null;
      }
      const row = await sql.get<{ db_now: string | number }>(`${upsert} RETURNING ${dialect.clockMs} AS db_now`, args);
      return row ? Number(row.db_now) : null;
    },
    live: (since) => sql.all<NodeInfo>('SELECT id, version, started_at, last_seen FROM nodes WHERE last_seen >= ? ORDER BY started_at, id', [since]),
    async leave(id) {
      await sql.run('DELETE FROM nodes WHERE id = ?', [id]);
    },
  };
}

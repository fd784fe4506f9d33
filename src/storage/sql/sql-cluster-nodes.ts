import type { ClusterNodes, NodeInfo } from '../cluster-nodes.js';
import type { SqlRunner } from './sql-runner.js';

/** The heartbeat table over SQL (table `nodes`). */
export function createSqlClusterNodes(sql: SqlRunner): ClusterNodes {
  return {
    async beat(node) {
      await sql.run(
        `INSERT INTO nodes (id, version, started_at, last_seen) VALUES (?, ?, ?, ?)
          ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen, version = excluded.version`,
        [node.id, node.version, node.started_at, node.last_seen],
      );
    },
    live: (since) => sql.all<NodeInfo>('SELECT id, version, started_at, last_seen FROM nodes WHERE last_seen >= ? ORDER BY started_at, id', [since]),
    async leave(id) {
      await sql.run('DELETE FROM nodes WHERE id = ?', [id]);
    },
  };
}

/** A daemon sharing the store, as its heartbeat row describes it. */
export interface NodeInfo {
  id: string;
  version: string;
  started_at: number;
  last_seen: number;
}

/** The heartbeat table behind `GET /v1/cluster` and lease takeover. */
export interface ClusterNodes {
  /**
   * Records that `node` is alive at `node.last_seen` (inserting it the first time). Returns the
   * database server's clock as it wrote the row (Unix ms), or null when that is this host's.
   */
  beat(node: NodeInfo): Promise<number | null>;
  /** Daemons seen at or after `since`, oldest start first. */
  live(since: number): Promise<NodeInfo[]>;
  /** Removes a daemon's row (a clean shutdown). */
  leave(id: string): Promise<void>;
}

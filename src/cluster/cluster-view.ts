import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import type { NodeInfo } from '../storage/cluster-nodes.js';
import type { Store } from '../storage/store.js';

// A daemon that has missed this many heartbeats is gone.
const MISSED_BEATS = 3;
// Past this, deadlines and heartbeats read differently on this daemon than on the others.
export const CLOCK_SKEW_WARN_MS = 1000;

export interface ClusterViewOptions {
  store: Store;
  clock: Clock;
  log: Logger;
  /** This daemon's id (a ULID made at start). */
  id: string;
  version: string;
  heartbeatMs: number;
}

/**
 * This daemon's place among the daemons sharing the store: a heartbeat row kept fresh every
 * `heartbeatMs`, and the list of daemons whose heartbeat is recent (GET /v1/cluster, and whose
 * delivery leases still count).
 */
export function createClusterView({ store, clock, log, id, version, heartbeatMs }: ClusterViewOptions) {
  const startedAt = clock.now();
  let timer: ReturnType<typeof setInterval> | null = null;
  // When this daemon's heartbeats last came back after failing or stalling (null: failing now).
  // While the store was unreachable nobody could beat: for a few beats after, a silent daemon may
  // just not have beaten again yet, so its leases are not taken from it before they run out. A
  // daemon that starts on a shared store may be starting just as it comes back: it counts from
  // its start. An embedded store is nobody else's: the rows left there are a dead run's.
  let beatingSince: number | null = store.info.kind === 'postgres' ? startedAt : Number.NEGATIVE_INFINITY;
  let lastBeat = startedAt;
  /** When each beat still running started: one running longer than a beat is a stall already. */
  const running = new Set<number>();
  const stalled = (now: number) => [...running].some((t) => now - t > heartbeatMs);

  let skewed = false;

  /**
   * Beats, and compares this daemon's clock with the database server's, which every daemon sees
   * alike: the server's time must fall between the clock before and after the round trip.
   */
  const beat = async () => {
    const before = clock.now();
    const server = await store.nodes.beat({ id, version, started_at: startedAt, last_seen: before });
    if (server === null) return;
    const after = clock.now();
    const ahead = server < before ? before - server : server > after ? after - server : 0;
    if (!skewed && Math.abs(ahead) > CLOCK_SKEW_WARN_MS) {
      skewed = true;
      log.warn(
        { clock_ahead_ms: ahead },
        "this daemon's clock differs from the database server's: request deadlines and other daemons' heartbeats are read off by as much (synchronise the hosts' clocks)",
      );
    } else if (skewed && Math.abs(ahead) <= CLOCK_SKEW_WARN_MS) {
      skewed = false;
      log.info({ clock_ahead_ms: ahead }, "this daemon's clock agrees with the database server's again");
    }
  };

  return {
    id,
    /** Writes the first heartbeat and keeps beating. */
    async start(): Promise<void> {
      await beat();
      timer = setInterval(() => {
        const started = clock.now();
        running.add(started);
        beat()
          .finally(() => running.delete(started))
          .then(
            () => {
              const now = clock.now();
              // A beat that hung (a partition, a paused host) hid an outage as well as one that failed.
              if (beatingSince === null || now - lastBeat > 2 * heartbeatMs) beatingSince = now;
              lastBeat = Math.max(lastBeat, now);
            },
            (err: unknown) => {
              beatingSince = null;
              log.warn({ err: (err as Error).message }, 'heartbeat failed');
            },
          );
      }, heartbeatMs);
      timer.unref();
    },
    /** Stops beating and removes this daemon's row (a clean stop). */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = null;
      await store.nodes.leave(id).catch(() => {});
    },
    /** Daemons seen within the last few heartbeats, this one included. */
    async live(): Promise<NodeInfo[]> {
      return store.nodes.live(clock.now() - MISSED_BEATS * heartbeatMs);
    },
    async liveIds(): Promise<string[]> {
      return (await this.live()).map((n) => n.id);
    },
    /**
     * The live daemons, for taking back the leases of the others; null while that cannot be told
     * (this daemon's own heartbeats failed within the last few beats: the store was unreachable).
     */
    async liveIdsIfKnown(): Promise<string[] | null> {
      const asked = clock.now();
      const since = beatingSince;
      if (since === null || asked - since < MISSED_BEATS * heartbeatMs || stalled(asked)) return null;
      const ids = await this.liveIds();
      // A read that waited on a hung store saw only who beat since it came back.
      const now = clock.now();
      return beatingSince === since && !stalled(now) && now - asked <= heartbeatMs ? ids : null;
    },
  };
}

export type ClusterView = ReturnType<typeof createClusterView>;

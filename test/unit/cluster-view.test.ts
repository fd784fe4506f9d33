import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { createClusterView, type ClusterView } from '../../src/cluster/cluster-view.js';
import { systemClock } from '../../src/lib/clock.js';
import type { Store } from '../../src/storage/store.js';

/**
 * Whom a daemon counts as alive, for taking back delivery leases: never right after its own
 * heartbeats failed (the store was unreachable, so nobody could beat and everyone looks gone).
 */
describe('cluster view', () => {
  const HEARTBEAT_MS = 100;
  let view: ClusterView | undefined;
  afterEach(async () => view?.stop());

  function start(beatOk: () => boolean) {
    const store = {
      nodes: {
        beat: async () => {
          if (!beatOk()) throw new Error('the database is unavailable');
        },
        live: async () => [{ id: 'me', version: '1', started_at: 0, last_seen: Date.now() }],
        leave: async () => {},
      },
    } as unknown as Store;
    view = createClusterView({ store, clock: systemClock, log: pino({ level: 'silent' }), id: 'me', version: '1', heartbeatMs: HEARTBEAT_MS });
    return view;
  }
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('tells who is live while its heartbeats succeed; not while they fail, nor for three beats after they succeed again', async () => {
    let ok = true;
    const v = start(() => ok);
    await v.start();
    expect(await v.liveIdsIfKnown()).toEqual(['me']);
    ok = false;
    await expect.poll(() => v.liveIdsIfKnown(), { timeout: 2_000, interval: 5 }).toBeNull();
    ok = true;
    // The first beat after the outage succeeds within one interval; three more must pass.
    await sleep(HEARTBEAT_MS * 1.5);
    expect(await v.liveIdsIfKnown()).toBeNull();
    await expect.poll(() => v.liveIdsIfKnown(), { timeout: 2_000, interval: 5 }).toEqual(['me']);
    expect(await v.liveIds()).toEqual(['me']);
  });
});

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

  const ME = () => [{ id: 'me', version: '1', started_at: 0, last_seen: Date.now() }];

  /** A view over a fake store: `beat` answers the database's clock (null: none), `live` the heartbeat rows. */
  function viewOf({
    kind = 'postgres',
    beat = async () => null,
    live = async () => ME(),
    heartbeatMs = HEARTBEAT_MS,
    log = pino({ level: 'silent' }),
    clock = systemClock,
  }: {
    kind?: string;
    beat?: () => Promise<number | null>;
    live?: () => Promise<unknown[]>;
    heartbeatMs?: number;
    log?: pino.Logger;
    clock?: typeof systemClock;
  } = {}) {
    const store = { info: { kind, location: 'test' }, nodes: { beat, live, leave: async () => {} } } as unknown as Store;
    return (view = createClusterView({ store, clock, log, id: 'me', version: '1', heartbeatMs }));
  }
  function start(beatOk: () => boolean) {
    return viewOf({
      beat: async () => {
        if (!beatOk()) throw new Error('the database is unavailable');
        return null;
      },
    });
  }
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('tells who is live while its heartbeats succeed; not while they fail, nor for three beats after they succeed again', async () => {
    let ok = true;
    const v = start(() => ok);
    await v.start();
    // Just started: the store may have just come back, so not before three beats.
    expect(await v.liveIdsIfKnown()).toBeNull();
    await expect.poll(() => v.liveIdsIfKnown(), { timeout: 2_000, interval: 5 }).toEqual(['me']);
    ok = false;
    await expect.poll(() => v.liveIdsIfKnown(), { timeout: 2_000, interval: 5 }).toBeNull();
    ok = true;
    // The first beat after the outage succeeds within one interval; three more must pass.
    await sleep(HEARTBEAT_MS * 1.5);
    expect(await v.liveIdsIfKnown()).toBeNull();
    await expect.poll(() => v.liveIdsIfKnown(), { timeout: 2_000, interval: 5 }).toEqual(['me']);
    expect(await v.liveIds()).toEqual(['me']);
  });

  it('a heartbeat that hung (a partition, a paused host) counts as an outage too: nobody is counted gone for three beats after', async () => {
    let hang: Promise<void> | null = null;
    let release = () => {};
    const v = viewOf({
      beat: async () => {
        if (hang) await hang;
        return null;
      },
    });
    await v.start();
    await expect.poll(() => v.liveIdsIfKnown(), { timeout: 2_000, interval: 5 }).toEqual(['me']);
    hang = new Promise<void>((resolve) => (release = resolve));
    await sleep(HEARTBEAT_MS * 5);
    hang = null;
    release();
    await expect.poll(() => v.liveIdsIfKnown(), { timeout: 2_000, interval: 5 }).toBeNull();
    await expect.poll(() => v.liveIdsIfKnown(), { timeout: 2_000, interval: 5 }).toEqual(['me']);
  });

  it('on an embedded store (nobody else beats there) knows at once at start', async () => {
    const v = viewOf({ kind: 'sqlite' });
    await v.start();
    expect(await v.liveIdsIfKnown()).toEqual(['me']);
  });
  it('a check whose read waited on a hung store tells nothing: it saw only who beat since', async () => {
    let gate: Promise<void> | null = null;
    let open = () => {};
    const waitGate = async () => {
      if (gate) await gate;
    };
    const v = viewOf({
      beat: async () => {
        await waitGate();
        return null;
      },
      live: async () => {
        await waitGate();
        return ME();
      },
    });
    await v.start();
    await expect.poll(() => v.liveIdsIfKnown(), { timeout: 2_000, interval: 5 }).toEqual(['me']);
    gate = new Promise<void>((resolve) => (open = resolve));
    const check = v.liveIdsIfKnown();
    await sleep(HEARTBEAT_MS * 5);
    // While a beat has hung for longer than a beat, a new check knows nothing either.
    expect(await Promise.race([v.liveIdsIfKnown(), sleep(50).then(() => 'waiting')])).toBeNull();
    gate = null;
    open();
    expect(await check).toBeNull();
  });

  it("warns once when its clock and the database server's differ by more than a second, and says when they agree again", async () => {
    let serverOffset = -5_000;
    const lines: Array<{ level: number; msg: string; clock_ahead_ms: number }> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const v = viewOf({ beat: async () => Date.now() + serverOffset, live: async () => [], log, heartbeatMs: 20 });
    await v.start();
    await sleep(100);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, msg: expect.stringContaining("differs from the database server's") });
    expect(lines[0]!.clock_ahead_ms).toBeGreaterThanOrEqual(4_900);
    serverOffset = 0;
    await expect.poll(() => lines.length, { timeout: 2_000, interval: 5 }).toBe(2);
    expect(lines[1]).toMatchObject({ level: 30, msg: expect.stringContaining('agrees') });
    await sleep(100);
    expect(lines).toHaveLength(2);
  });

  it('compares nothing when the database has no clock of its own (SQLite)', async () => {
    const lines: unknown[] = [];
    const v = viewOf({
      live: async () => [],
      clock: { ...systemClock, now: () => 0 },
      log: pino({ level: 'info' }, { write: (l: string) => void lines.push(l) }),
      heartbeatMs: 20,
    });
    await v.start();
    await sleep(60);
    expect(lines).toEqual([]);
  });
});

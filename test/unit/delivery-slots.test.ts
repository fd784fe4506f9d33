import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCallbackDispatcher, type CallbackDispatcher } from '../../src/callbacks/callback-dispatcher.js';
import { DELIVERY_SLOTS, PER_HOOK_SLOTS, RESERVED_SLOTS, roomFor } from '../../src/callbacks/delivery-slots.js';
import type { AttemptOutcome } from '../../src/callbacks/retry-policy.js';
import { loadConfig } from '../../src/config.js';
import type { HookConfig } from '../../src/notify/hook-config.js';
import type { HookSender } from '../../src/notify/hook-sender.js';
import { NotifyEvents } from '../../src/notify/notify-events.js';
import { RequestEvents } from '../../src/requests/request-events.js';
import type { DeliveryFilter } from '../../src/storage/delivery-outbox.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/store.js';
import { startReceiver, type Receiver } from '../callbacks/callback-kit.js';
import { createFakeClock, type FakeClock } from '../helpers/fake-clock.js';
import { storedRequest } from '../helpers/stored-request.js';

describe('delivery slots: how the worker shares its attempts in flight', () => {
  const hooks = (...names: string[]) => names;
  const callbacks = (n: number) => Array.from({ length: n }, () => null);

  it('admits everything while nothing is in flight', () => {
    expect(roomFor([])).toEqual({ callbacks: true, hooks: true, busyHooks: [] });
  });

  it('leaves out a hook with two messages in flight, and only that hook', () => {
    expect(PER_HOOK_SLOTS).toBe(2);
    expect(roomFor(hooks('a'))).toEqual({ callbacks: true, hooks: true, busyHooks: [] });
    expect(roomFor(hooks('a', 'b', 'a'))).toEqual({ callbacks: true, hooks: true, busyHooks: ['a'] });
    expect(roomFor(hooks('a', 'a', 'b', 'b', null))).toEqual({ callbacks: true, hooks: true, busyHooks: ['a', 'b'] });
  });

  it('keeps two slots for callbacks when hooks fill theirs, and two for hooks when callbacks do', () => {
    expect([DELIVERY_SLOTS, RESERVED_SLOTS]).toEqual([8, 2]);
    expect(roomFor(hooks('a', 'a', 'b', 'b', 'c', 'c'))).toEqual({ callbacks: true, hooks: false, busyHooks: ['a', 'b', 'c'] });
    expect(roomFor([...hooks('a', 'b', 'c', 'd', 'e', 'f'), null])).toEqual({ callbacks: true, hooks: false, busyHooks: [] });
    expect(roomFor(callbacks(6))).toEqual({ callbacks: false, hooks: true, busyHooks: [] });
    expect(roomFor([...callbacks(6), 'a'])).toEqual({ callbacks: false, hooks: true, busyHooks: [] });
    expect(roomFor([...callbacks(5), 'a'])).toEqual({ callbacks: true, hooks: true, busyHooks: [] });
  });

  it('has no room once eight are in flight', () => {
    expect(roomFor([...callbacks(6), 'a', 'b'])).toBeNull();
    expect(roomFor([...hooks('a', 'a', 'b', 'b', 'c', 'c'), null, null])).toBeNull();
    expect(roomFor([...callbacks(4), 'a', 'a', 'b', 'b'])).toBeNull();
  });
});

/** Waits until `done` holds, however long that takes (the test's own timeout is the limit). */
async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await done())) await new Promise((r) => setTimeout(r, 5));
}

/** One hook message the fake sender holds until the test finishes it. */
interface HeldSend {
  hook: string;
  id: string;
  finish(): void;
}

/**
 * The worker itself on a real SQLite file: hook messages go to a sender that holds each one until
 * the test finishes it, callbacks to a real loopback receiver that holds every request.
 */
describe('the delivery worker shares its slots', () => {
  let dir: string;
  let store: Store;
  let clock: FakeClock;
  let receiver: Receiver;
  let holding: boolean;
  let sends: HeldSend[];
  let worker: CallbackDispatcher | undefined;
  let notify: NotifyEvents;
  let nextDueResults: Array<number | null>;
  let requestId: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-slots-'));
    store = openSqliteStore(join(dir, 'countersign.db'), { synchronous: 'full' });
    clock = createFakeClock(10_000);
    holding = true;
    sends = [];
    nextDueResults = [];
    notify = new NotifyEvents();
    receiver = await startReceiver(() => (holding ? 'hang' : { status: 200 }));
    const s = storedRequest({ callback_url: `${receiver.url}/cb` });
    requestId = s.record.id;
    await store.write((tx) => tx.requests.insert(s));
    // What the worker was told about the next due row it has room for.
    const nextDue = store.deliveries.nextDue.bind(store.deliveries);
    store.deliveries.nextDue = async (filter?: DeliveryFilter) => {
      const at = await nextDue(filter);
      nextDueResults.push(at);
      return at;
    };
  });

  afterEach(async () => {
    const stopping = worker?.stop();
    holding = false;
    for (const s of sends) s.finish();
    for (const res of receiver.held.splice(0)) res.writeHead(200).end();
    await stopping;
    worker = undefined;
    await receiver.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function queue(rows: Array<{ id: string; hook: string | null; at: number }>) {
    await store.write(async (tx) => {
      for (const r of rows)
        await tx.deliveries.insert({
          id: r.id,
          requestId,
          type: 'request.created',
          hook: r.hook,
          url: r.hook ? `hook:${r.hook}` : `${receiver.url}/cb`,
          body: '{}',
          createdAt: r.at,
        });
    });
  }

  function start() {
    const hookConfig = (name: string) => ({ name, webhook: 'http://127.0.0.1:9/unused' }) as HookConfig;
    const sender = {
      send: (hook: HookConfig, m: { id: string }, controller: AbortController) =>
        new Promise<{ outcome: AttemptOutcome; latencyMs: number }>((resolve) => {
          const finish = () => resolve({ outcome: { kind: 'delivered', status: 200 }, latencyMs: 1 });
          if (!holding) return finish();
          sends.push({ hook: hook.name, id: m.id, finish });
          controller.signal.addEventListener('abort', () => resolve({ outcome: { kind: 'interrupted', error: 'stopped' }, latencyMs: 1 }));
        }),
      timeoutOf: () => 15_000,
      close: async () => {},
    } as unknown as HookSender;
    worker = createCallbackDispatcher({
      store,
      node: 'node-a',
      liveNodes: async () => ['node-a'],
      takeoverCheckMs: 60_000,
      events: new RequestEvents(),
      clock,
      config: loadConfig({ env: {}, overrides: { callbacks: { allowlist: ['127.0.0.1'], timeout: '1h' } } }).callbacks,
      log: pino({ level: 'silent' }),
      userAgent: 'countersign/test',
      hooks: { get: hookConfig, all: () => [], events: notify, sender },
    });
    return worker.start();
  }

  const perHook = () => {
    const counts: Record<string, number> = {};
    for (const s of sends) counts[s.hook] = (counts[s.hook] ?? 0) + 1;
    return counts;
  };

  it('sends at most two messages of one hook, fills at most six slots with hooks, and gives callbacks the rest', async () => {
    let at = 100;
    const rows = [];
    for (const hook of ['a', 'b', 'c', 'd']) for (let i = 1; i <= 3; i++) rows.push({ id: `${hook}${i}`, hook, at: at++ });
    for (let i = 1; i <= 4; i++) rows.push({ id: `cb${i}`, hook: null, at: at++ });
    await queue(rows);
    await start();

    // Nothing in flight ends while the test holds it: once eight are in flight, that is all there will be.
    await until(() => worker!.inFlight() === 8);
    await receiver.waitFor(2);
    expect(perHook()).toEqual({ a: 2, b: 2, c: 2 });
    expect(sends.map((s) => s.id)).toEqual(['a1', 'a2', 'b1', 'b2', 'c1', 'c2']);
    expect(receiver.received.length).toBe(2);

    // Two of a's end: its third message and d's first take the two hook slots they free.
    for (const s of sends.filter((x) => x.hook === 'a')) s.finish();
    await until(() => sends.length === 8);
    expect(sends.slice(6).map((s) => s.id)).toEqual(['a3', 'd1']);
    await until(() => worker!.inFlight() === 8);
    expect(receiver.received.length).toBe(2);
  });

  it('keeps two slots for hook messages when callbacks hang', async () => {
    const rows = [];
    for (let i = 1; i <= 8; i++) rows.push({ id: `cb${i}`, hook: null, at: 100 + i });
    rows.push({ id: 'a1', hook: 'a', at: 200 }, { id: 'b1', hook: 'b', at: 201 });
    await queue(rows);
    await start();

    await until(() => worker!.inFlight() === 8);
    await receiver.waitFor(6);
    expect(sends.map((s) => s.id)).toEqual(['a1', 'b1']);
    expect(receiver.received.length).toBe(6);
  });

  it('does not wake for the due messages of a hook with no slot left, and still sends a callback queued meanwhile', async () => {
    await queue([1, 2, 3, 4, 5].map((i) => ({ id: `a${i}`, hook: 'a', at: 100 + i })));
    await start();

    await until(() => sends.length === 2);
    // After leasing a1 and a2 the worker asked for the next row it has room for: there is none
    // (a3..a5 are due, but a has no slot), so it arms no timer and waits for an attempt to end.
    await until(() => nextDueResults.length > 0);
    await new Promise((r) => setImmediate(r));
    expect(nextDueResults.at(-1)).toBeNull();
    expect(clock.pending()).toBe(0);
    expect(worker!.inFlight()).toBe(2);

    await queue([{ id: 'cb1', hook: null, at: 200 }]);
    notify.emit({ type: 'deliveries.queued' });
    await receiver.waitFor(1);
    expect(worker!.inFlight()).toBe(3);
    expect(sends.map((s) => s.id)).toEqual(['a1', 'a2']);

    // a's attempts end: its remaining messages go out, two at a time.
    holding = false;
    for (const s of sends) s.finish();
    await until(async () => (await store.deliveries.listForHook('a', 10)).every((d) => d.state === 'delivered'));
  });
});

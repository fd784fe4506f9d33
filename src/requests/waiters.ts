import type { Clock } from '../lib/clock.js';
import type { RequestEvents } from './request-events.js';
import type { HandupRequest } from './request-schema.js';

type Wake = (record: HandupRequest | null) => void;

/**
 * Long-poll support. The waiter registers before the caller reads the row, so a decision that
 * commits between the read and the wait is never missed (subscribe first, then check).
 * Decisions made on other daemons arrive as events too (the store relays them).
 */
export function createWaiters({ events, clock }: { events: RequestEvents; clock: Clock }) {
  const byId = new Map<string, Set<Wake>>();
  let closed = false;

  events.on((e) => {
    if (e.type === 'request.created') return;
    const set = byId.get(e.request.id);
    if (!set) return;
    byId.delete(e.request.id);
    for (const wake of set) wake(e.request);
  });

  return {
    /**
     * Waits until request `id` leaves pending or `timeoutMs` passes. Resolves with the terminal
     * record, or with a fresh read (`check`) when the time ran out or the daemon is shutting
     * down: the caller then answers with the still-pending record. `check` also decides who may
     * wait (it throws not_found for someone else's request). `signal` (the caller hung up) ends
     * the wait at once, as the timeout would, so a gone client holds nothing for its full wait.
     */
    wait(id: string, timeoutMs: number, check: () => Promise<HandupRequest>, signal?: AbortSignal): Promise<HandupRequest> {
      return new Promise((resolve, reject) => {
        let done = false;
        const remove = () => {
          const set = byId.get(id);
          set?.delete(wake);
          // Unknown ids must not leave empty entries behind (callers choose the ids).
          if (set?.size === 0) byId.delete(id);
        };
        const onAbort = () => finish(null);
        const finish = (terminal: HandupRequest | null) => {
          if (done) return;
          done = true;
          clock.clearTimer(timer);
          signal?.removeEventListener('abort', onAbort);
          remove();
          if (terminal) resolve(terminal);
          else check().then(resolve, reject);
        };
        // Until the first check has said this caller may wait on `id`, a wake-up must not hand
        // over the event's record (someone else's request is 404): it only asks for a fresh check.
        let permitted = false;
        let woken = false;
        const wake: Wake = (r) => (permitted ? finish(r) : (woken = true));
        let set = byId.get(id);
        if (!set) byId.set(id, (set = new Set()));
        set.add(wake);
        const timer = clock.setTimer(() => finish(null), timeoutMs);
        signal?.addEventListener('abort', onAbort, { once: true });
        if (closed || signal?.aborted) return finish(null);
        check().then(
          (current) => {
            permitted = true;
            if (current.status !== 'pending') finish(current);
            else if (woken) finish(null);
          },
          (err: unknown) => {
            if (done) return;
            done = true;
            clock.clearTimer(timer);
            signal?.removeEventListener('abort', onAbort);
            remove();
            reject(err);
          },
        );
      });
    },

    /**
     * Waits until any of `ids` leaves pending, `timeoutMs` passes, `signal` aborts or the daemon
     * shuts down; the caller reads the records afterwards. As for `wait`, it subscribes first and
     * then runs `anyEnded` (a fresh read, which also decides who may wait): a change committed in
     * between is never missed.
     */
    waitAny(ids: readonly string[], timeoutMs: number, anyEnded: () => Promise<boolean>, signal?: AbortSignal): Promise<void> {
      return new Promise((resolve, reject) => {
        let done = false;
        const unique = [...new Set(ids)];
        const finish = (err?: unknown) => {
          if (done) return;
          done = true;
          clock.clearTimer(timer);
          signal?.removeEventListener('abort', onAbort);
          for (const id of unique) {
            const set = byId.get(id);
            set?.delete(wake);
            if (set?.size === 0) byId.delete(id);
          }
          if (err === undefined) resolve();
          else reject(err);
        };
        const wake: Wake = () => finish();
        const onAbort = () => finish();
        for (const id of unique) {
          let set = byId.get(id);
          if (!set) byId.set(id, (set = new Set()));
          set.add(wake);
        }
        const timer = clock.setTimer(() => finish(), timeoutMs);
        signal?.addEventListener('abort', onAbort, { once: true });
        if (closed || signal?.aborted) return finish();
        anyEnded().then(
          (ended) => {
            if (ended) finish();
          },
          (err: unknown) => finish(err ?? new Error('waitAny check failed')),
        );
      });
    },

    /** Answers every open long-poll with its current (pending) record: used on shutdown. */
    releaseAll() {
      closed = true;
      for (const [id, set] of byId) {
        byId.delete(id);
        for (const wake of set) wake(null);
      }
    },

    /** True once releaseAll has run: the daemon is shutting down. */
    closing: () => closed,

    /** The requests someone waits on, for a recheck when their events may have gone unheard. */
    held(): string[] {
      return [...byId.keys()];
    },

    count(): number {
      let n = 0;
      for (const set of byId.values()) n += set.size;
      return n;
    },
  };
}

export type Waiters = ReturnType<typeof createWaiters>;

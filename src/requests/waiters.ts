import type { Clock } from '../clock.js';
import type { RequestEvents } from './request-events.js';
import type { HandupRequest } from './request-schema.js';

type Wake = (record: HandupRequest | null) => void;

/**
 * Long-poll support. The waiter registers before the caller reads the row, so a decision that
 * commits between the read and the wait is never missed (subscribe first, then check).
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
     * record, or null when the time ran out (or the daemon is shutting down): the caller then
     * answers with the still-pending record.
     */
    wait(id: string, timeoutMs: number, check: () => HandupRequest): Promise<HandupRequest> {
      return new Promise((resolve, reject) => {
        let done = false;
        const finish = (terminal: HandupRequest | null) => {
          if (done) return;
          done = true;
          clock.clearTimer(timer);
          byId.get(id)?.delete(wake);
          if (byId.get(id)?.size === 0) byId.delete(id);
          try {
            resolve(terminal ?? check());
          } catch (err) {
            reject(err);
          }
        };
        const wake: Wake = (r) => finish(r);
        let set = byId.get(id);
        if (!set) byId.set(id, (set = new Set()));
        set.add(wake);
        const timer = clock.setTimer(() => finish(null), timeoutMs);
        if (closed) return finish(null);
        try {
          const current = check();
          if (current.status !== 'pending') finish(current);
        } catch (err) {
          done = true;
          clock.clearTimer(timer);
          set.delete(wake);
          // Unknown ids must not leave empty entries behind (callers choose the ids).
          if (set.size === 0 && byId.get(id) === set) byId.delete(id);
          reject(err);
        }
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

    count(): number {
      let n = 0;
      for (const set of byId.values()) n += set.size;
      return n;
    },
  };
}

export type Waiters = ReturnType<typeof createWaiters>;

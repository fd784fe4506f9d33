import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../clock.js';
import type { BlobStore } from './blob-store.js';

// setTimeout stores its delay in an int32; longer waits are reached in hops.
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Deletes blobs no request names once `blobs.retention` has passed since their last upload.
 * One timer, set for the moment the longest-unreferenced blob comes due (or one retention
 * period ahead when none is unreferenced: anything uploaded later is due later still), so it
 * never polls. `start()` first drops chunks of uploads a stopped daemon left unfinished.
 */
export function createBlobSweeper({ store, clock, retentionMs, log }: { store: BlobStore; clock: Clock; retentionMs: number; log: Logger }) {
  let timer: TimerHandle | null = null;
  let stopped = true;

  function arm() {
    if (stopped) return;
    const now = clock.now();
    const oldest = store.oldestUnreferenced();
    const at = oldest === null ? now + retentionMs : oldest + retentionMs;
    timer = clock.setTimer(fire, Math.min(Math.max(0, at - now), MAX_TIMER_MS));
  }

  function fire() {
    timer = null;
    try {
      const deleted = store.sweep(clock.now() - retentionMs);
      if (deleted) log.info({ count: deleted }, 'deleted blobs no request names');
    } catch (err) {
      log.error({ err }, 'blob sweep failed; retrying in a minute');
      if (!stopped) timer = clock.setTimer(fire, 60_000);
      return;
    }
    arm();
  }

  return {
    start() {
      stopped = false;
      const dropped = store.discardUnfinished();
      if (dropped) log.info({ chunks: dropped }, 'dropped chunks of unfinished uploads');
      fire();
    },
    stop() {
      stopped = true;
      if (timer) clock.clearTimer(timer);
      timer = null;
    },
  };
}

export type BlobSweeper = ReturnType<typeof createBlobSweeper>;

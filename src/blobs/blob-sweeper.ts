import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../lib/clock.js';
import type { BlobStore } from './blob-store.js';

// setTimeout stores its delay in an int32; longer waits are reached in hops.
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Deletes blobs no request names once `blobs.retention` has passed since their last upload.
 * One timer, set for the moment the longest-unreferenced blob comes due (or one retention
 * period ahead when none is unreferenced: anything uploaded later is due later still), so it
 * never polls. Each sweep first drops chunks of uploads a stopped daemon left unfinished.
 */
export function createBlobSweeper({ store, clock, retentionMs, log }: { store: BlobStore; clock: Clock; retentionMs: number; log: Logger }) {
  let timer: TimerHandle | null = null;
  let stopped = true;
  let sweeping: Promise<void> | null = null;

  async function arm() {
    const now = clock.now();
    const oldest = await store.oldestUnreferenced();
    if (stopped) return;
    const at = oldest === null ? now + retentionMs : oldest + retentionMs;
    timer = clock.setTimer(fire, Math.min(Math.max(0, at - now), MAX_TIMER_MS));
  }

  function fire() {
    timer = null;
    sweeping = (async () => {
      try {
        const dropped = await store.discardUnfinished();
        if (dropped) log.info({ chunks: dropped }, 'dropped chunks of unfinished uploads');
        const deleted = await store.sweep(clock.now() - retentionMs);
        if (deleted) log.info({ count: deleted }, 'deleted blobs no request names');
        await arm();
      } catch (err) {
        log.error({ err }, 'blob sweep failed; retrying in a minute');
        if (!stopped) timer = clock.setTimer(fire, 60_000);
      } finally {
        sweeping = null;
      }
    })();
  }

  return {
    /** Sweeps what is due (and uploads a stopped daemon left unfinished), then waits for the next. */
    async start(): Promise<void> {
      stopped = false;
      fire();
      await sweeping;
    },
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clock.clearTimer(timer);
      timer = null;
      await sweeping;
    },
  };
}

export type BlobSweeper = ReturnType<typeof createBlobSweeper>;

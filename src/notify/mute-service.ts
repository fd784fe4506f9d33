import type { Clock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { MuteRow } from '../storage/mute-records.js';
import type { Store, WriteTx } from '../storage/store.js';
import type { NotifyEvents } from './notify-events.js';

export interface NewMute {
  agent?: string | null | undefined;
  session?: string | null | undefined;
  /** How long the mute lasts (ms); absent: until removed. */
  forMs?: number | null | undefined;
  dismiss_notices?: boolean | undefined;
}

/**
 * Mutes, stored so they hold on every daemon and across restarts. Every change
 * emits `mutes.changed` here after commit and, through the store, on the other daemons.
 */
export function createMuteService({ store, clock, events }: { store: Store; clock: Clock; events: NotifyEvents }) {
  function changed(tx: WriteTx) {
    tx.announce({ type: 'mutes.changed' });
    tx.afterCommit(() => events.emit({ type: 'mutes.changed' }));
  }

  return {
    create(m: NewMute): Promise<MuteRow> {
      return store.write(async (tx) => {
        const now = clock.now();
        const mute: MuteRow = {
          id: newId(now),
          agent: m.agent ?? null,
          session: m.session ?? null,
          dismiss_notices: m.dismiss_notices ?? false,
          created_at: now,
          expires_at: m.forMs ? now + m.forMs : null,
        };
        await tx.mutes.insert(mute);
        changed(tx);
        return mute;
      });
    },

    /** Mutes in force, oldest first (expired ones are gone from the list and no longer apply). */
    list(): Promise<MuteRow[]> {
      return store.mutes.active(clock.now());
    },

    remove(id: string): Promise<MuteRow> {
      return store.write(async (tx) => {
        const removed = await tx.mutes.remove(id);
        if (!removed) throw new AppError('not_found', `mute ${id} not found`);
        changed(tx);
        return removed;
      });
    },
  };
}

export type MuteService = ReturnType<typeof createMuteService>;

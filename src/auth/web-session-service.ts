import { scryptSync } from 'node:crypto';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { ADMIN, type Principal } from './principal.js';
import { newSecret, sha256Hex } from './secrets.js';
import type { Store } from '../storage/store.js';
import type { WebSessionRow } from '../storage/web-session-records.js';

/** A live session of the reviewer page. */
export interface WebSession {
  id: string;
  principal: Principal;
  /** The hard end (Unix ms). */
  expiresAt: number;
  /** The end if it is not used again (Unix ms). */
  idleExpiresAt: number;
}

export interface NewWebSession extends WebSession {
  /** Shown once, to the page that signed in; only its SHA-256 is stored. */
  secret: string;
}

// Writing last_seen_at on every call would turn each page request into a write.
const TOUCH_EVERY_MS = 60_000;

/**
 * Sessions of the reviewer page: a random secret per sign-in, stored hashed, ended by sign-out,
 * by `idleMs` without use, by `maxMs` after sign-in whatever the use, and by a change of the
 * credential that signed in (a rotated admin token ends every session made with the old one).
 * Everything is read from the store, so any daemon sharing it accepts and ends the same
 * sessions.
 */
export function createWebSessionService({
  store,
  clock,
  adminToken,
  idleMs,
  maxMs,
}: {
  store: Store;
  clock: Clock;
  adminToken: string;
  idleMs: number;
  maxMs: number;
}) {
  // The admin token as a session stores it: scrypt, not a plain hash, so a copy of the database
  // is no cheap oracle for guessing a short token. Derived on first use, not at every start.
  let adminCredential: string | null = null;
  const admin = () => (adminCredential ??= `admin:${scryptSync(adminToken, 'countersign web session credential', 16).toString('hex')}`);

  async function use(row: WebSessionRow): Promise<WebSession | null> {
    const now = clock.now();
    if (row.revoked_at !== null || row.expires_at <= now || row.idle_expires_at <= now || row.credential !== admin()) return null;
    let idleExpiresAt = row.idle_expires_at;
    // Written at most once a minute (a write per API call would be wasteful), or a quarter of a
    // shorter idle timeout, so a session in use never runs out.
    if (row.last_seen_at <= now - Math.min(TOUCH_EVERY_MS, idleMs / 4)) {
      idleExpiresAt = Math.min(now + idleMs, row.expires_at);
      await store.write((tx) => tx.webSessions.touch(row.id, now, idleExpiresAt));
    }
    return { id: row.id, principal: ADMIN, expiresAt: row.expires_at, idleExpiresAt };
  }

  return {
    /**
     * Forgets the sessions signed in with another admin token: a changed token ends them for
     * good, even if the old token comes back. Run once the daemon has started (the token's
     * derivation takes a moment).
     */
    endOtherCredentials: () => store.write((tx) => tx.webSessions.deleteOtherCredentials(admin())),

    /** Starts a session for a principal that may review (today: the admin). */
    create(principal: Principal): Promise<NewWebSession> {
      if (principal.kind !== 'admin') throw new Error('only a reviewer-capable principal gets a web session');
      const secret = newSecret('csw_');
      const credential = admin();
      return store.write(async (tx) => {
        const now = clock.now();
        // Sign-in is rare: a good moment to forget sessions that can no longer be used.
        await tx.webSessions.deleteEnded(now);
        const row = {
          id: newId(now),
          digest: sha256Hex(secret),
          credential,
          created_at: now,
          last_seen_at: now,
          idle_expires_at: now + Math.min(idleMs, maxMs),
          expires_at: now + maxMs,
        };
        await tx.webSessions.insert(row);
        return { secret, id: row.id, principal: ADMIN, expiresAt: row.expires_at, idleExpiresAt: row.idle_expires_at };
      });
    },

    /** The live session a secret names, or null. Using a session slides its idle expiry. */
    async authenticate(secret: string): Promise<WebSession | null> {
      const row = await store.webSessions.byDigest(sha256Hex(secret));
      return row ? use(row) : null;
    },

    /** Whether session `id` is still live; an open event stream asks on every ping, which counts as use. */
    async isLive(id: string): Promise<boolean> {
      const row = await store.webSessions.byId(id);
      return row !== undefined && (await use(row)) !== null;
    },

    /** Ends a session (sign-out). False when it had already ended. */
    revoke(id: string): Promise<boolean> {
      return store.write(async (tx) => {
        const ended = await tx.webSessions.revoke(id, clock.now());
        // Other daemons sharing the store close the session's event streams at once, not at their next ping.
        if (ended) tx.announce({ type: 'sessions.ended' });
        return ended;
      });
    },
  };
}

export type WebSessionService = ReturnType<typeof createWebSessionService>;

import type { Clock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { Store } from '../storage/store.js';
import type { TokenRow } from '../storage/token-records.js';
import { GRANTS, normalizeGrants, type Grant } from './grants.js';
import { ADMIN, type Principal } from './principal.js';
import { digestsEqual, newSecret, sha256Hex } from './secrets.js';

export const TOKEN_NAME = /^[a-z0-9-]{1,40}$/;

export interface TokenInfo {
  name: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  grants: Grant[];
}

/** The stored grants; names this version does not know (a newer one wrote them) grant nothing. */
function grantsOf(row: TokenRow): Grant[] {
  return normalizeGrants(row.grants.filter((g): g is Grant => (GRANTS as readonly string[]).includes(g)));
}

const info = (row: TokenRow): TokenInfo => ({
  name: row.name,
  created_at: row.created_at,
  expires_at: row.expires_at,
  last_used_at: row.last_used_at,
  grants: grantsOf(row),
});

/** Submit tokens (stored as SHA-256 digests only) and bearer authentication. */
export function createTokenService({ store, clock, adminToken }: { store: Store; clock: Clock; adminToken: string }) {
  // last_used_at is advisory: write it at most once a minute per token, not on every call.
  const lastTouched = new Map<string, number>();
  const adminDigest = sha256Hex(adminToken);

  return {
    create(name: string, expiresInMs: number | null, grants: readonly Grant[] = []): Promise<TokenInfo & { token: string }> {
      const token = newSecret('cst_');
      return store.write(async (tx) => {
        const now = clock.now();
        const row = {
          id: newId(now),
          name,
          digest: sha256Hex(token),
          created_at: now,
          expires_at: expiresInMs === null ? null : now + expiresInMs,
          grants: normalizeGrants(grants),
        };
        // Checked by the insert itself, so two creates racing on several daemons cannot both pass.
        if (!(await tx.tokens.insert(row))) throw new AppError('token_exists', `a token named "${name}" already exists; revoke it first`);
        return { ...info({ ...row, revoked_at: null, last_used_at: null }), token };
      });
    },

    async list(): Promise<TokenInfo[]> {
      return (await store.tokens.listLive()).map(info);
    },

    async get(name: string): Promise<TokenInfo> {
      const row = await store.tokens.liveByName(name);
      if (!row) throw new AppError('not_found', `no token named "${name}"`);
      return info(row);
    },

    revoke(name: string): Promise<TokenInfo & { revoked_at: number }> {
      return store.write(async (tx) => {
        const row = await tx.tokens.liveByName(name);
        if (!row) throw new AppError('not_found', `no token named "${name}"`);
        const at = clock.now();
        await tx.tokens.revoke(row.id, at);
        return { ...info(row), revoked_at: at };
      });
    },

    /**
     * The admin principal when `secret` is the admin token, else null: a constant-time comparison
     * of digests and no store read, so a caller can answer it without waiting.
     */
    admin(secret: string): Principal | null {
      return digestsEqual(sha256Hex(secret), adminDigest) ? ADMIN : null;
    },

    /** Maps a bearer secret to a principal; null when it is unknown, revoked or expired. */
    async authenticate(secret: string): Promise<Principal | null> {
      // Every bearer secret is hashed once per call: compared in constant time with the admin
      // token's digest, then looked up by digest, so timing reveals nothing about the secret.
      const digest = sha256Hex(secret);
      if (digestsEqual(digest, adminDigest)) return ADMIN;
      const row = await store.tokens.byDigest(digest);
      if (!row || row.revoked_at !== null) return null;
      const now = clock.now();
      if (row.expires_at !== null && row.expires_at <= now) return null;
      if ((lastTouched.get(row.id) ?? 0) < now - 60_000) {
        lastTouched.set(row.id, now);
        // Not awaited: the caller need not wait for bookkeeping.
        store.write((tx) => tx.tokens.touch(row.id, now)).catch(() => lastTouched.delete(row.id));
      }
      return { kind: 'submit', tokenId: row.id, name: row.name, grants: grantsOf(row) };
    },

    /**
     * A secret that was a submit token, since revoked or expired: presenting it is an agent that
     * missed the news, not a guess, so it is answered 401 and never throttled.
     */
    async isRetired(secret: string): Promise<boolean> {
      const row = await store.tokens.byDigest(sha256Hex(secret));
      return row !== undefined && row !== null && (row.revoked_at !== null || (row.expires_at !== null && row.expires_at <= clock.now()));
    },
  };
}

export type TokenService = ReturnType<typeof createTokenService>;

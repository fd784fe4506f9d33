import type { Db } from '../db/database.js';

export interface TokenRow {
  id: string;
  name: string;
  digest: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
  /** JSON array of grant names. */
  grants: string;
}

export function createTokenRepository(db: Db) {
  const stmts = {
    insert: db.prepare('INSERT INTO tokens (id, name, digest, created_at, expires_at, grants) VALUES (?, ?, ?, ?, ?, ?)'),
    liveByName: db.prepare('SELECT * FROM tokens WHERE name = ? AND revoked_at IS NULL'),
    byDigest: db.prepare('SELECT * FROM tokens WHERE digest = ?'),
    listLive: db.prepare('SELECT * FROM tokens WHERE revoked_at IS NULL ORDER BY name'),
    revoke: db.prepare('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    touch: db.prepare('UPDATE tokens SET last_used_at = ? WHERE id = ?'),
  };
  return {
    insert(row: Pick<TokenRow, 'id' | 'name' | 'digest' | 'created_at' | 'expires_at' | 'grants'>): void {
      stmts.insert.run(row.id, row.name, row.digest, row.created_at, row.expires_at, row.grants);
    },
    liveByName: (name: string) => stmts.liveByName.get(name) as TokenRow | undefined,
    byDigest: (digest: string) => stmts.byDigest.get(digest) as TokenRow | undefined,
    listLive: () => stmts.listLive.all() as TokenRow[],
    revoke: (id: string, at: number) => stmts.revoke.run(at, id).changes === 1,
    touch: (id: string, at: number) => void stmts.touch.run(at, id),
  };
}

export type TokenRepository = ReturnType<typeof createTokenRepository>;

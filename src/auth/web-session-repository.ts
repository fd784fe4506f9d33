import type { Db } from '../db/database.js';

export interface WebSessionRow {
  id: string;
  digest: string;
  credential: string;
  created_at: number;
  last_seen_at: number;
  idle_expires_at: number;
  expires_at: number;
  revoked_at: number | null;
}

/** The reviewer page's sessions (SQL only; the rules are in web-session-service.ts). */
export function createWebSessionRepository(db: Db) {
  const stmts = {
    insert: db.prepare(`INSERT INTO web_sessions (id, digest, credential, created_at, last_seen_at, idle_expires_at, expires_at)
      VALUES (@id, @digest, @credential, @created_at, @last_seen_at, @idle_expires_at, @expires_at)`),
    byDigest: db.prepare('SELECT * FROM web_sessions WHERE digest = ?'),
    byId: db.prepare('SELECT * FROM web_sessions WHERE id = ?'),
    touch: db.prepare('UPDATE web_sessions SET last_seen_at = ?, idle_expires_at = ? WHERE id = ? AND revoked_at IS NULL'),
    revoke: db.prepare('UPDATE web_sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    deleteEnded: db.prepare('DELETE FROM web_sessions WHERE expires_at <= @now OR idle_expires_at <= @now OR revoked_at IS NOT NULL'),
  };
  return {
    insert(row: Omit<WebSessionRow, 'revoked_at'>): void {
      stmts.insert.run(row);
    },
    byDigest: (digest: string) => stmts.byDigest.get(digest) as WebSessionRow | undefined,
    byId: (id: string) => stmts.byId.get(id) as WebSessionRow | undefined,
    touch: (id: string, at: number, idleExpiresAt: number) => void stmts.touch.run(at, idleExpiresAt, id),
    revoke: (id: string, at: number) => stmts.revoke.run(at, id).changes === 1,
    /** Forgets sessions that can no longer be used; returns how many. */
    deleteEnded: (now: number) => stmts.deleteEnded.run({ now }).changes,
  };
}

export type WebSessionRepository = ReturnType<typeof createWebSessionRepository>;

import type { WebSessionRecords, WebSessionRow } from '../web-session-records.js';
import type { SqlRunner } from './sql-runner.js';

/** The reviewer page's sessions over SQL (table `web_sessions`). */
export function createSqlWebSessionRecords(sql: SqlRunner): WebSessionRecords {
  return {
    async insert(row) {
      await sql.run('INSERT INTO web_sessions (id, digest, credential, created_at, last_seen_at, idle_expires_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
        row.id,
        row.digest,
        row.credential,
        row.created_at,
        row.last_seen_at,
        row.idle_expires_at,
        row.expires_at,
      ]);
    },
    byDigest: (digest) => sql.get<WebSessionRow>('SELECT * FROM web_sessions WHERE digest = ?', [digest]),
    byId: (id) => sql.get<WebSessionRow>('SELECT * FROM web_sessions WHERE id = ?', [id]),
    async touch(id, at, idleExpiresAt) {
      await sql.run('UPDATE web_sessions SET last_seen_at = ?, idle_expires_at = ? WHERE id = ? AND revoked_at IS NULL', [at, idleExpiresAt, id]);
    },
    revoke: async (id, at) => (await sql.run('UPDATE web_sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [at, id])) === 1,
    deleteEnded: (now) => sql.run('DELETE FROM web_sessions WHERE expires_at <= ? OR idle_expires_at <= ? OR revoked_at IS NOT NULL', [now, now]),
    deleteOtherCredentials: (credential) => sql.run('DELETE FROM web_sessions WHERE credential <> ?', [credential]),
  };
}

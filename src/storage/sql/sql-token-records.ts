import type { TokenRecords, TokenRow } from '../token-records.js';
import type { SqlRunner } from './sql-runner.js';

/** Submit tokens over SQL (table `tokens`). */
export function createSqlTokenRecords(sql: SqlRunner): TokenRecords {
  return {
    async insert(row) {
      await sql.run('INSERT INTO tokens (id, name, digest, created_at, expires_at) VALUES (?, ?, ?, ?, ?)', [row.id, row.name, row.digest, row.created_at, row.expires_at]);
    },
    liveByName: (name) => sql.get<TokenRow>('SELECT * FROM tokens WHERE name = ? AND revoked_at IS NULL', [name]),
    byDigest: (digest) => sql.get<TokenRow>('SELECT * FROM tokens WHERE digest = ?', [digest]),
    listLive: () => sql.all<TokenRow>('SELECT * FROM tokens WHERE revoked_at IS NULL ORDER BY name'),
    revoke: async (id, at) => (await sql.run('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [at, id])) === 1,
    touch: async (id, at) => void (await sql.run('UPDATE tokens SET last_used_at = ? WHERE id = ?', [at, id])),
  };
}

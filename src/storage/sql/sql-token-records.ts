import type { TokenRecords, TokenRow } from '../token-records.js';
import type { SqlRunner } from './sql-runner.js';

type Row = Omit<TokenRow, 'grants'> & { grants: string };

/** Grants are a JSON array in a text column. */
function toToken(row: Row | undefined): TokenRow | undefined {
  if (!row) return undefined;
  const grants: unknown = JSON.parse(row.grants);
  return { ...row, grants: Array.isArray(grants) ? grants.filter((g): g is string => typeof g === 'string') : [] };
}

/** Submit tokens over SQL (table `tokens`). */
export function createSqlTokenRecords(sql: SqlRunner): TokenRecords {
  const one = async (text: string, args: unknown[]) => toToken(await sql.get<Row>(text, args));
  return {
    async insert(row) {
      // The unique index on live names (tokens_live_name) settles two creates racing on several
      // daemons: the loser writes nothing, and its transaction goes on (PostgreSQL's would abort on an error).
      const inserted = await sql.run(
        'INSERT INTO tokens (id, name, digest, created_at, expires_at, grants) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) WHERE revoked_at IS NULL DO NOTHING',
        [row.id, row.name, row.digest, row.created_at, row.expires_at, JSON.stringify(row.grants)],
      );
      return inserted === 1;
    },
    liveByName: (name) => one('SELECT * FROM tokens WHERE name = ? AND revoked_at IS NULL', [name]),
    byDigest: (digest) => one('SELECT * FROM tokens WHERE digest = ?', [digest]),
    listLive: async () => (await sql.all<Row>('SELECT * FROM tokens WHERE revoked_at IS NULL ORDER BY name')).map((r) => toToken(r)!),
    revoke: async (id, at) => (await sql.run('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [at, id])) === 1,
    touch: async (id, at) => void (await sql.run('UPDATE tokens SET last_used_at = ? WHERE id = ?', [at, id])),
  };
}

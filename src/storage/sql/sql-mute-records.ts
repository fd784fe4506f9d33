import type { MuteRecords, MuteRow } from '../mute-records.js';
import type { SqlRunner } from './sql-runner.js';

interface Row extends Omit<MuteRow, 'dismiss_notices'> {
  dismiss_notices: number;
}

const toMute = (r: Row): MuteRow => ({ ...r, dismiss_notices: Boolean(r.dismiss_notices) });

/** Mutes over SQL (table `mutes`). */
export function createSqlMuteRecords(sql: SqlRunner): MuteRecords {
  return {
    async insert(m) {
      await sql.run('INSERT INTO mutes (id, agent, session, dismiss_notices, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)', [
        m.id,
        m.agent,
        m.session,
        m.dismiss_notices ? 1 : 0,
        m.created_at,
        m.expires_at,
      ]);
    },
    async active(now) {
      const rows = await sql.all<Row>('SELECT * FROM mutes WHERE expires_at IS NULL OR expires_at > ? ORDER BY id', [now]);
      return rows.map(toMute);
    },
    async remove(id) {
      const row = await sql.get<Row>('DELETE FROM mutes WHERE id = ? RETURNING *', [id]);
      return row && toMute(row);
    },
  };
}

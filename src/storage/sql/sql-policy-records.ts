import type { AutoModeName } from '../../policy/auto-mode.js';
import type { Rule } from '../../policy/rule-schema.js';
import type { HandupRequest } from '../../requests/request-schema.js';
import type { PolicyAuditEntry, PolicyRecords, PolicyState, RuleHits, StoredRuleRow } from '../policy-records.js';
import type { SqlRunner } from './sql-runner.js';

interface RuleRow {
  rule: string;
  created_at: number;
  created_by: string;
  expires_at: number | null;
}

/** The columns of the policy state row (StateRow); the PostgreSQL store reads them too (known-policy-state.ts). */
export const POLICY_STATE_COLUMNS = 'version, auto_mode, auto_until, auto_set_at, auto_set_by, history_indexed';
const POLICY_STATE_SQL = `SELECT ${POLICY_STATE_COLUMNS} FROM policy_state WHERE id = 1`;

export interface StateRow {
  version: number;
  auto_mode: string;
  auto_until: number | null;
  auto_set_at: number | null;
  auto_set_by: string | null;
  history_indexed: number;
}

const toStored = (row: RuleRow): StoredRuleRow => ({
  rule: JSON.parse(row.rule) as Rule,
  created_at: Number(row.created_at),
  created_by: row.created_by,
  expires_at: row.expires_at === null ? null : Number(row.expires_at),
});

export function policyState(row: StateRow): PolicyState {
  return {
    version: Number(row.version),
    auto: { mode: row.auto_mode as AutoModeName, until: row.auto_until, set_at: row.auto_set_at, set_by: row.auto_set_by },
    historyIndexed: Number(row.history_indexed) === 1,
  };
}

/**
 * Stored rules, rule hit counts, the policy state row and the policy audit log over SQL (tables
 * `rules`, `rule_hits`, `policy_state`, `policy_audit`); the simulation reads `requests`.
 */
export function createSqlPolicyRecords(sql: SqlRunner): PolicyRecords {
  return {
    async state() {
      return policyState((await sql.get<StateRow>(POLICY_STATE_SQL))!);
    },

    async rules(now) {
      const rows = await sql.all<RuleRow>(
        'SELECT rule, created_at, created_by, expires_at FROM rules WHERE expires_at IS NULL OR expires_at > ? ORDER BY seq',
        [now],
      );
      return rows.map(toStored);
    },

    async nextRuleExpiry() {
      const row = await sql.get<{ at: number | string | null }>('SELECT MIN(expires_at) AS at FROM rules');
      return row?.at == null ? null : Number(row.at);
    },

    hits: () => sql.all<RuleHits>('SELECT rule_id, hits, last_hit_at FROM rule_hits'),

    async ended({ since, until, before, limit }) {
      // The compact facts only: the request records themselves (previews, native frames) are never read.
      const page = before ? ' AND (resolved_at < ? OR (resolved_at = ? AND request_id < ?))' : '';
      const args: unknown[] = [since, until, ...(before ? [before.resolvedAt, before.resolvedAt, before.id] : []), limit];
      const rows = await sql.all<{ facts: string; resolved_at: number }>(
        `SELECT facts, resolved_at FROM request_facts WHERE resolved_at >= ? AND resolved_at <= ?${page} ORDER BY resolved_at DESC, request_id DESC LIMIT ?`,
        args,
      );
      const out = new Array<{ facts: string; resolvedAt: number }>(rows.length);
      for (let i = 0; i < rows.length; i++) out[i] = { facts: rows[i]!.facts, resolvedAt: Number(rows[i]!.resolved_at) };
      return out;
    },

    async endedRecords(afterId, limit) {
      const rows = await sql.all<{ format: string; record: string; resolved_at: number }>(
        'SELECT format, record, resolved_at FROM requests WHERE id > ? AND resolved_at IS NOT NULL ORDER BY id LIMIT ?',
        [afterId, limit],
      );
      return rows.map((r) => ({ format: r.format, record: JSON.parse(r.record) as HandupRequest, resolvedAt: Number(r.resolved_at) }));
    },

    async indexEnded(requestId, resolvedAt, facts) {
      await sql.run('INSERT INTO request_facts (request_id, resolved_at, facts) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [requestId, resolvedAt, facts]);
    },

    async markHistoryIndexed() {
      await sql.run('UPDATE policy_state SET history_indexed = 1 WHERE id = 1');
    },

    async audit(limit) {
      const rows = await sql.all<PolicyAuditEntry & { details: string | null }>(
        'SELECT id, event, actor, at, subject, details FROM policy_audit ORDER BY id DESC LIMIT ?',
        [limit],
      );
      return rows.map(({ details, ...row }) => (details === null ? row : { ...row, details: JSON.parse(details) }));
    },

    async insertRule(row) {
      const changed = await sql.run('INSERT INTO rules (id, rule, created_at, created_by, expires_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING', [
        row.rule.id,
        JSON.stringify(row.rule),
        row.created_at,
        row.created_by,
        row.expires_at,
      ]);
      if (changed !== 1) return false;
      // A new rule counts from zero, even under the id of a config rule since taken out of the file.
      await sql.run('DELETE FROM rule_hits WHERE rule_id = ?', [row.rule.id]);
      return true;
    },

    async deleteRule(id) {
      const row = await sql.get<RuleRow>('DELETE FROM rules WHERE id = ? RETURNING rule, created_at, created_by, expires_at', [id]);
      await sql.run('DELETE FROM rule_hits WHERE rule_id = ?', [id]);
      return row && toStored(row);
    },

    async deleteExpired(now) {
      const gone = await sql.all<RuleRow & { id: string; seq: number }>(
        'DELETE FROM rules WHERE expires_at IS NOT NULL AND expires_at <= ? RETURNING seq, id, rule, created_at, created_by, expires_at',
        [now],
      );
      // RETURNING promises no order: put them back in the order they were evaluated.
      gone.sort((a, b) => Number(a.seq) - Number(b.seq));
      for (const { id } of gone) await sql.run('DELETE FROM rule_hits WHERE rule_id = ?', [id]);
      return gone.map(toStored);
    },

    async bumpVersion() {
      await sql.run('UPDATE policy_state SET version = version + 1 WHERE id = 1');
    },

    async hit(ruleId, at) {
      await sql.run(
        `INSERT INTO rule_hits (rule_id, hits, last_hit_at) VALUES (?, 1, ?)
          ON CONFLICT (rule_id) DO UPDATE SET hits = rule_hits.hits + 1, last_hit_at = excluded.last_hit_at`,
        [ruleId, at],
      );
    },

    async setAuto(s) {
      await sql.run('UPDATE policy_state SET auto_mode = ?, auto_until = ?, auto_set_at = ?, auto_set_by = ? WHERE id = 1', [
        s.mode,
        s.until,
        s.set_at,
        s.set_by,
      ]);
    },

    async expireAuto(until, by) {
      // Conditional: whichever daemon's timer fires first turns it off; a mode set since is left alone.
      const changed = await sql.run(
        "UPDATE policy_state SET auto_mode = 'off', auto_until = NULL, auto_set_at = ?, auto_set_by = ? WHERE id = 1 AND auto_mode <> 'off' AND auto_until = ?",
        [until, by, until],
      );
      return changed === 1;
    },

    async appendAudit(event, actor, at, subject, details) {
      await sql.run('INSERT INTO policy_audit (event, actor, at, subject, details) VALUES (?, ?, ?, ?, ?)', [
        event,
        actor,
        at,
        subject,
        details === undefined ? null : JSON.stringify(details),
      ]);
    },
  };
}

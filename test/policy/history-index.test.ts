import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { PolicyEvents } from '../../src/rules/policy-events.js';
import { createRuleService } from '../../src/rules/rule-service.js';
import { readMigrations } from '../../src/storage/migrations.js';
import { migrateSqlite, SQLITE_MIGRATIONS_DIR } from '../../src/storage/sqlite/sqlite-migrate.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';

/**
 * A database upgraded with history already in it: requests that ended before the facts table
 * existed are indexed once, so the simulation sees them too.
 */
describe('indexing history that predates the policy tables', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('indexes ended requests once after the upgrade, and the simulation replays them', async () => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-history-'));
    const path = join(dir, 'countersign.db');
    const now = Date.now();
    // The database as the version before policy left it: two ended requests, one pending.
    const old = new Database(path);
    const all = readMigrations(SQLITE_MIGRATIONS_DIR);
    const before = all.slice(
      0,
      all.findIndex((m) => m.name.includes('policy')),
    );
    migrateSqlite(old, before);
    const insert = old.prepare(
      'INSERT INTO requests (id, format, submitter, status, kind, agent, content_hash, created_at, resolved_at, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const ids: string[] = [];
    for (const [status, decidedBy] of [
      ['denied', 'alice'],
      ['approved', 'alice'],
      ['pending', null],
    ] as const) {
      const id = newId(now - 60_000);
      ids.push(id);
      const record = {
        id,
        title: `Run git status (${status})`,
        callback_url: null,
        summary: null,
        kind: 'command',
        risk: 'low',
        source: { integration: null, agent: 'claude-code', session: null, cwd: null, repo: null, branch: null, host: null },
        previews: [{ type: 'command', command: { shell: 'git status' } }],
        options: [
          { id: 'approve', label: 'Approve', outcome: 'approve' },
          { id: 'deny', label: 'Deny', outcome: 'deny' },
        ],
        input: null,
        timeout: null,
        on_timeout: 'deny',
        dedupe_key: null,
        status,
        content_hash: 'sha256:x',
        created_at: now - 60_000,
        expires_at: null,
        decision: decidedBy
          ? {
              option: status === 'approved' ? 'approve' : 'deny',
              content_hash: 'sha256:x',
              outcome: status === 'approved' ? 'approve' : 'deny',
              feedback: null,
              fields: null,
              decided_by: decidedBy,
              decided_at: now - 1000,
            }
          : null,
      };
      insert.run(
        id,
        'handup',
        'admin',
        status,
        'command',
        'claude-code',
        'sha256:x',
        now - 60_000,
        status === 'pending' ? null : now - 1000,
        JSON.stringify(record),
      );
    }
    old.close();

    const store = openSqliteStore(path, { synchronous: 'normal' });
    try {
      expect((await store.policy.state()).historyIndexed).toBe(false);
      const rules = createRuleService({ store, clock: systemClock, events: new PolicyEvents(), configRules: [], sessionScopeTtlMs: 1000 });
      const candidate = [{ id: 'git', match: { command: '^git status' }, action: 'approve' as const }];
      expect((await rules.simulate({ rules: candidate })).evaluated).toBe(0);

      expect(await rules.indexHistory()).toBe(2);
      expect((await store.policy.state()).historyIndexed).toBe(true);
      const result = await rules.simulate({ rules: candidate });
      expect(result.evaluated).toBe(2);
      expect(result.disagreements).toEqual([expect.objectContaining({ request_id: ids[0], actual: 'denied', decided_by: 'alice' })]);
      // Done once: a later start has nothing to do.
      expect(await rules.indexHistory()).toBe(0);
    } finally {
      await store.close();
    }
  });
});

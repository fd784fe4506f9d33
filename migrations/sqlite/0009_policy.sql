-- Policy (policy.md): stored rules, how often each rule (config rules too) matched a real
-- request, the one policy state row every create reads, the policy's own audit log, and the
-- few facts of each ended request that a replay of rules over history reads.

CREATE TABLE rules (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT, -- evaluation order: oldest first
  id         TEXT NOT NULL UNIQUE,             -- [a-z0-9][a-z0-9-]{0,63}, unique across config and store
  rule       TEXT NOT NULL,                    -- the rule as given (JSON: id, match, action, feedback?, risk?, timeout?)
  created_at INTEGER NOT NULL,                 -- Unix ms
  created_by TEXT NOT NULL,                    -- audit actor
  expires_at INTEGER                           -- Unix ms; null = never (session-scoped approvals expire)
);

CREATE TABLE rule_hits (
  rule_id     TEXT PRIMARY KEY,                -- a config or stored rule id
  hits        INTEGER NOT NULL,
  last_hit_at INTEGER NOT NULL                 -- Unix ms
);

-- One row. `version` moves on every change of the stored rules, so a daemon knows when the
-- rules it compiled are stale; auto mode lives here so every daemon on the store applies it.
CREATE TABLE policy_state (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  version     INTEGER NOT NULL,
  auto_mode   TEXT NOT NULL CHECK (auto_mode IN ('off', 'low', 'all')),
  auto_until  INTEGER,                         -- Unix ms when auto mode turns itself off
  auto_set_at INTEGER,
  auto_set_by TEXT,
  history_indexed INTEGER NOT NULL           -- 1 once every request that ended before this table existed has its facts
);
INSERT INTO policy_state (id, version, auto_mode, history_indexed)
  VALUES (1, 0, 'off', CASE WHEN EXISTS (SELECT 1 FROM requests WHERE resolved_at IS NOT NULL) THEN 0 ELSE 1 END);

-- What the simulation reads of an ended request (matcher facts, options, outcome), written in
-- its terminal transition: a few hundred bytes, however large the request's previews.
CREATE TABLE request_facts (
  request_id  TEXT PRIMARY KEY,
  resolved_at INTEGER NOT NULL,              -- Unix ms, as requests.resolved_at
  facts       TEXT NOT NULL                  -- JSON (src/policy/history-facts.ts)
);
CREATE INDEX request_facts_resolved ON request_facts (resolved_at, request_id);

CREATE TABLE policy_audit (
  id      INTEGER PRIMARY KEY AUTOINCREMENT,
  event   TEXT NOT NULL,                       -- rule.added, rule.removed, auto.changed
  actor   TEXT NOT NULL,
  at      INTEGER NOT NULL,
  subject TEXT,                                -- the rule id, for rule events
  details TEXT                                 -- JSON, optional
);
CREATE TRIGGER policy_audit_no_update BEFORE UPDATE ON policy_audit
BEGIN SELECT RAISE(ABORT, 'audit rows are append-only'); END;
CREATE TRIGGER policy_audit_no_delete BEFORE DELETE ON policy_audit
BEGIN SELECT RAISE(ABORT, 'audit rows are append-only'); END;

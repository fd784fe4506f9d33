-- Policy (policy.md), as on SQLite (migrations/sqlite/0009_policy.sql): stored rules, rule hit
-- counts shared by every daemon, the policy state row every create reads, the policy audit log,
-- the facts of ended requests the simulation reads.

CREATE TABLE rules (
  seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- evaluation order: oldest first
  id         TEXT NOT NULL UNIQUE,
  rule       TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  created_by TEXT NOT NULL,
  expires_at BIGINT
);

CREATE TABLE rule_hits (
  rule_id     TEXT PRIMARY KEY,
  hits        BIGINT NOT NULL,
  last_hit_at BIGINT NOT NULL
);

CREATE TABLE policy_state (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  version     BIGINT NOT NULL,
  auto_mode   TEXT NOT NULL CHECK (auto_mode IN ('off', 'low', 'all')),
  auto_until  BIGINT,
  auto_set_at BIGINT,
  auto_set_by TEXT,
  history_indexed INTEGER NOT NULL
);
INSERT INTO policy_state (id, version, auto_mode, history_indexed)
  VALUES (1, 0, 'off', CASE WHEN EXISTS (SELECT 1 FROM requests WHERE resolved_at IS NOT NULL) THEN 0 ELSE 1 END);

CREATE TABLE request_facts (
  request_id  TEXT PRIMARY KEY,
  resolved_at BIGINT NOT NULL,
  facts       TEXT NOT NULL
);
CREATE INDEX request_facts_resolved ON request_facts (resolved_at, request_id);

CREATE TABLE policy_audit (
  id      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event   TEXT NOT NULL,
  actor   TEXT NOT NULL,
  at      BIGINT NOT NULL,
  subject TEXT,
  details TEXT
);
CREATE TRIGGER policy_audit_no_update BEFORE UPDATE OR DELETE ON policy_audit FOR EACH ROW EXECUTE FUNCTION audit_append_only();
CREATE TRIGGER policy_audit_no_truncate BEFORE TRUNCATE ON policy_audit FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();

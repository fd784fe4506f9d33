-- The core tables: requests (the handup record plus broker metadata), the append-only audit
-- log, submit tokens (stored as SHA-256 digests) and content-addressed blobs.

CREATE TABLE requests (
  id             TEXT PRIMARY KEY,          -- ULID, also the record's id
  format         TEXT NOT NULL,             -- handup | paperclip | ask | roll | alp
  submitter      TEXT NOT NULL,             -- 'admin' or 'token:<token id>'
  status         TEXT NOT NULL,
  kind           TEXT NOT NULL,
  agent          TEXT,
  session        TEXT,
  dedupe_key     TEXT,
  native_key     TEXT,                      -- permanent key derived from native ids (formats.md)
  content_hash   TEXT NOT NULL,
  created_at     INTEGER NOT NULL,          -- Unix ms
  expires_at     INTEGER,                   -- Unix ms, null = never
  resolved_at    INTEGER,                   -- Unix ms when it left pending
  record         TEXT NOT NULL,             -- the handup Request as served (JSON)
  native_frame   TEXT,                      -- the native frame as received (JSON)
  native_context TEXT,                      -- what the adapter needs to reply (JSON)
  native_reply   TEXT                       -- the native reply, rendered once at the terminal transition (JSON)
);

-- handup dedupe: one pending request per submitter and key (product.md §3).
CREATE UNIQUE INDEX requests_pending_dedupe ON requests (submitter, dedupe_key)
  WHERE status = 'pending' AND dedupe_key IS NOT NULL AND format = 'handup';
-- Native formats: a native key maps to one record forever, per submitter.
CREATE UNIQUE INDEX requests_native_key ON requests (format, submitter, native_key)
  WHERE native_key IS NOT NULL;
CREATE INDEX requests_pending_expiry ON requests (expires_at) WHERE status = 'pending' AND expires_at IS NOT NULL;
CREATE INDEX requests_status ON requests (status, id);
CREATE INDEX requests_resolved ON requests (resolved_at, id) WHERE resolved_at IS NOT NULL;
CREATE INDEX requests_submitter ON requests (submitter, id);

CREATE TABLE audit (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  request_id TEXT NOT NULL,
  event      TEXT NOT NULL,                 -- created, decided, expired, cancelled, callback.delivered, ...
  actor      TEXT NOT NULL,
  at         INTEGER NOT NULL,
  details    TEXT                           -- JSON, optional
);
CREATE INDEX audit_request ON audit (request_id, id);

-- Audit rows are never updated or deleted (product.md §3): the database enforces it.
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'audit rows are append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'audit rows are append-only'); END;

CREATE TABLE tokens (
  id           TEXT PRIMARY KEY,            -- ULID; requests point here, so a re-created name is a new submitter
  name         TEXT NOT NULL,
  digest       TEXT NOT NULL UNIQUE,        -- hex SHA-256 of the secret
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER,
  revoked_at   INTEGER,
  last_used_at INTEGER
);
CREATE UNIQUE INDEX tokens_live_name ON tokens (name) WHERE revoked_at IS NULL;

CREATE TABLE blobs (
  hash       TEXT PRIMARY KEY,              -- 'sha256:<hex>'
  size       INTEGER NOT NULL,
  bytes      BLOB NOT NULL,
  created_at INTEGER NOT NULL
);

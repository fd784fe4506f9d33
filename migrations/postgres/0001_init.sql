-- countersign on PostgreSQL: the same tables as on SQLite (migrations/sqlite), plus what several
-- daemons on one database need: the change log behind cross-node wake-ups and shared rate counters.

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
  created_at     BIGINT NOT NULL,           -- Unix ms
  expires_at     BIGINT,                    -- Unix ms, null = never
  resolved_at    BIGINT,                    -- Unix ms when it left pending
  record         TEXT NOT NULL,             -- the handup Request as served (JSON)
  native_frame   TEXT,                      -- the native frame as received (JSON)
  native_context TEXT,                      -- what the adapter needs to reply (JSON)
  native_reply   TEXT                       -- the native reply, rendered once at the terminal transition (JSON)
);

-- handup dedupe: one pending request per submitter and key, whichever daemon inserts it.
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
  id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  request_id TEXT NOT NULL,
  event      TEXT NOT NULL,                 -- created, decided, expired, cancelled, callback.delivered, ...
  actor      TEXT NOT NULL,
  at         BIGINT NOT NULL,
  details    TEXT                           -- JSON, optional
);
CREATE INDEX audit_request ON audit (request_id, id);

-- Audit rows are never updated or deleted (product.md §3): the database enforces it.
CREATE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit rows are append-only';
END;
$$;
CREATE TRIGGER audit_no_update BEFORE UPDATE OR DELETE ON audit FOR EACH ROW EXECUTE FUNCTION audit_append_only();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();

CREATE TABLE tokens (
  id           TEXT PRIMARY KEY,            -- ULID; requests point here, so a re-created name is a new submitter
  name         TEXT NOT NULL,
  digest       TEXT NOT NULL UNIQUE,        -- hex SHA-256 of the secret
  created_at   BIGINT NOT NULL,
  expires_at   BIGINT,
  revoked_at   BIGINT,
  last_used_at BIGINT,
  grants       TEXT NOT NULL DEFAULT '[]'   -- JSON array of grant names, fixed at creation
);
CREATE UNIQUE INDEX tokens_live_name ON tokens (name) WHERE revoked_at IS NULL;

-- Preview blobs: one row per SHA-256, the bytes in chunks written as an upload arrives (rows of
-- an upload in progress carry 'upload:<start time>:<id>' until the bytes are complete).
CREATE TABLE blobs (
  hash        TEXT PRIMARY KEY,             -- 'sha256:<hex>'
  size        BIGINT NOT NULL,
  created_at  BIGINT NOT NULL,
  uploaded_at BIGINT NOT NULL               -- retention counts from the latest upload of the same bytes
);
CREATE INDEX blobs_uploaded ON blobs (uploaded_at);
CREATE TABLE blob_chunks (
  hash  TEXT NOT NULL,
  n     INTEGER NOT NULL,
  bytes BYTEA NOT NULL,
  PRIMARY KEY (hash, n)
);
-- Who uploaded a blob: each uploader's quota counts it once.
CREATE TABLE blob_owners (
  owner TEXT NOT NULL,                      -- 'admin' or 'token:<token id>'
  hash  TEXT NOT NULL,
  size  BIGINT NOT NULL,
  PRIMARY KEY (owner, hash)
);
CREATE INDEX blob_owners_hash ON blob_owners (hash);
-- Which requests name which blobs in their previews; a named blob is never swept.
CREATE TABLE blob_refs (
  hash       TEXT NOT NULL,
  request_id TEXT NOT NULL REFERENCES requests (id),
  PRIMARY KEY (hash, request_id)
);

-- Sessions of the reviewer web page; only the secret's SHA-256 is stored.
CREATE TABLE web_sessions (
  id              TEXT PRIMARY KEY,
  digest          TEXT NOT NULL UNIQUE,
  credential      TEXT NOT NULL,
  created_at      BIGINT NOT NULL,
  last_seen_at    BIGINT NOT NULL,
  idle_expires_at BIGINT NOT NULL,
  expires_at      BIGINT NOT NULL,
  revoked_at      BIGINT
);
CREATE INDEX web_sessions_expires ON web_sessions (expires_at);

-- Named monotonic counters that must survive restarts (e.g. the JSON-RPC ids of native replies).
CREATE TABLE counters (
  name  TEXT PRIMARY KEY,
  value BIGINT NOT NULL
);

-- The callback outbox (product.md §6), as on SQLite; leased_by names the daemon making the attempt.
CREATE TABLE callback_deliveries (
  id              TEXT PRIMARY KEY,
  request_id      TEXT NOT NULL REFERENCES requests (id),
  type            TEXT NOT NULL,
  url             TEXT NOT NULL,
  body            TEXT NOT NULL,
  state           TEXT NOT NULL CHECK (state IN ('pending', 'leased', 'delivered', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT,
  lease_until     BIGINT,
  leased_by       TEXT,
  created_at      BIGINT NOT NULL,
  finished_at     BIGINT,
  last_error      TEXT
);
CREATE INDEX callback_deliveries_due ON callback_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX callback_deliveries_leased ON callback_deliveries (lease_until) WHERE state = 'leased';
CREATE INDEX callback_deliveries_request ON callback_deliveries (request_id, id);

CREATE TABLE callback_attempts (
  delivery_id TEXT NOT NULL REFERENCES callback_deliveries (id),
  n           INTEGER NOT NULL,
  started_at  BIGINT NOT NULL,
  status      INTEGER,
  latency_ms  INTEGER,
  error_class TEXT,
  error       TEXT,
  PRIMARY KEY (delivery_id, n)
);

-- The daemons sharing this database (GET /v1/cluster), kept by heartbeats.
CREATE TABLE nodes (
  id         TEXT PRIMARY KEY,
  version    TEXT NOT NULL,
  started_at BIGINT NOT NULL,
  last_seen  BIGINT NOT NULL
);

-- Committed changes, announced with NOTIFY; daemons read them by seq, so a lost notification
-- only delays a wake-up. Pruned after a while.
CREATE TABLE changes (
  seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  type       TEXT NOT NULL,
  request_id TEXT,
  node       TEXT NOT NULL,
  at         BIGINT NOT NULL DEFAULT (extract(epoch FROM clock_timestamp()) * 1000)::bigint
);

-- Counted creates per key (a submit token's rate limit), shared by every daemon.
CREATE TABLE rate_events (
  key TEXT NOT NULL,
  at  BIGINT NOT NULL                       -- Unix ms
);
CREATE INDEX rate_events_key ON rate_events (key, at);

-- Counts one event for `k` unless `lim` were counted after `since`; says whether it counted.
-- The advisory lock (held to the end of the calling statement's transaction) queues concurrent
-- takes of one key, and each statement here sees what the one before it committed.
CREATE FUNCTION countersign_rate_take(k TEXT, lim INTEGER, since BIGINT, now BIGINT) RETURNS BOOLEAN
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('countersign.rate:' || k, 0));
  IF (SELECT count(*) FROM rate_events WHERE key = k AND at > since) >= lim THEN
    RETURN FALSE;
  END IF;
  INSERT INTO rate_events (key, at) VALUES (k, now);
  RETURN TRUE;
END;
$$;

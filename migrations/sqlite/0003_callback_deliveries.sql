-- The callback outbox (product.md §6): one delivery row per terminal transition of a request
-- that has a callback_url, written in the transition's own transaction, plus one row per
-- delivery attempt so every try is visible in GET /v1/requests/{id}/deliveries.

CREATE TABLE callback_deliveries (
  id              TEXT PRIMARY KEY,          -- ULID; sent as `webhook-id` and as the body's `id`
  request_id      TEXT NOT NULL REFERENCES requests (id),
  type            TEXT NOT NULL,             -- request.decided | request.expired | request.cancelled
  url             TEXT NOT NULL,             -- the callback_url at the transition
  body            TEXT NOT NULL,             -- the exact JSON sent on every attempt, built once
  state           TEXT NOT NULL CHECK (state IN ('pending', 'leased', 'delivered', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0, -- attempts started (interrupted ones included)
  next_attempt_at INTEGER,                   -- Unix ms; set while pending
  lease_until     INTEGER,                   -- Unix ms; set while leased (an attempt is in flight)
  created_at      INTEGER NOT NULL,          -- Unix ms of the terminal transition (max_age counts from here)
  finished_at     INTEGER,                   -- Unix ms of the final outcome
  last_error      TEXT
);
CREATE INDEX callback_deliveries_due ON callback_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX callback_deliveries_leased ON callback_deliveries (lease_until) WHERE state = 'leased';
CREATE INDEX callback_deliveries_request ON callback_deliveries (request_id, id);

CREATE TABLE callback_attempts (
  delivery_id TEXT NOT NULL REFERENCES callback_deliveries (id),
  n           INTEGER NOT NULL,              -- 1-based
  started_at  INTEGER NOT NULL,              -- Unix ms
  status      INTEGER,                       -- HTTP status; null when no response came back
  latency_ms  INTEGER,                       -- null while in flight or when interrupted
  error_class TEXT,                          -- null on success; timeout, network, dns, http_status, ...
  error       TEXT,                          -- short human message (never the receiver's body)
  PRIMARY KEY (delivery_id, n)
);

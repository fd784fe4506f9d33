-- Notifications (notify.md). Hook deliveries share the callback outbox: `hook` names the hook a
-- row is for (NULL: the request's own callback_url), so they get the same leases, retries and
-- attempt records.
ALTER TABLE callback_deliveries ADD COLUMN hook TEXT;
CREATE INDEX callback_deliveries_hook ON callback_deliveries (hook, id) WHERE hook IS NOT NULL;

-- Muted sources (POST /v1/mutes): an empty agent or session matches any.
CREATE TABLE mutes (
  id              TEXT PRIMARY KEY,          -- ULID
  agent           TEXT,
  session         TEXT,
  dismiss_notices INTEGER NOT NULL DEFAULT 0,
  created_at      INTEGER NOT NULL,          -- Unix ms
  expires_at      INTEGER                    -- Unix ms, null = until removed
);

-- One burst window per hook and source (agent + session; '' when absent).
CREATE TABLE notify_bursts (
  hook              TEXT NOT NULL,
  agent             TEXT NOT NULL,
  session           TEXT NOT NULL,
  window_end        INTEGER NOT NULL,        -- Unix ms; at or before now = no open window
  sent              INTEGER NOT NULL,        -- notifications sent in the window
  held              INTEGER NOT NULL,        -- notifications held back (summarised at window_end)
  latest_request_id TEXT,                    -- the newest held request, shown in the summary
  PRIMARY KEY (hook, agent, session)
);
CREATE INDEX notify_bursts_held ON notify_bursts (window_end) WHERE held > 0;

-- When a pending request's next reminder and its expiring notice are due; removed when it ends.
CREATE TABLE request_notices (
  request_id  TEXT PRIMARY KEY REFERENCES requests (id),
  remind_at   INTEGER,                       -- Unix ms of the next request.reminder, null = none
  expiring_at INTEGER                        -- Unix ms of request.expiring, null = none or sent
);
CREATE INDEX request_notices_remind ON request_notices (remind_at) WHERE remind_at IS NOT NULL;
CREATE INDEX request_notices_expiring ON request_notices (expiring_at) WHERE expiring_at IS NOT NULL;

-- Keys the daemons share (the decision-link signing key), so any daemon verifies any link.
CREATE TABLE daemon_keys (
  name       TEXT PRIMARY KEY,
  secret     TEXT NOT NULL,                  -- base64url
  created_at INTEGER NOT NULL
);

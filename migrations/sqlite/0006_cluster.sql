-- Which daemon holds a delivery's lease, so a lease whose holder is gone is taken back at once.
ALTER TABLE callback_deliveries ADD COLUMN leased_by TEXT;

-- The daemons using this database (GET /v1/cluster). With SQLite there is one at a time.
CREATE TABLE nodes (
  id         TEXT PRIMARY KEY,
  version    TEXT NOT NULL,
  started_at INTEGER NOT NULL,              -- Unix ms
  last_seen  INTEGER NOT NULL               -- Unix ms of the last heartbeat
);

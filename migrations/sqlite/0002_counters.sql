-- Named monotonic counters that must survive restarts (e.g. the JSON-RPC ids of native replies).
CREATE TABLE counters (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);

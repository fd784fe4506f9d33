-- Sessions of the reviewer web page. The page signs in with a reviewer-capable credential (the
-- admin token) and gets a random session secret, kept in the tab's sessionStorage and sent as a
-- bearer header. Only the secret's SHA-256 is stored, so a copy of the database signs nobody
-- in; any daemon sharing this database accepts a session another one created.

CREATE TABLE web_sessions (
  id              TEXT PRIMARY KEY,          -- ULID; names the session in logs, never the secret
  digest          TEXT NOT NULL UNIQUE,      -- hex SHA-256 of the session secret
  credential      TEXT NOT NULL,             -- what signed in: 'admin:<scrypt fingerprint of the admin token>'
  created_at      INTEGER NOT NULL,          -- Unix ms
  last_seen_at    INTEGER NOT NULL,          -- Unix ms of the last use (written at most once a minute)
  idle_expires_at INTEGER NOT NULL,          -- Unix ms; moves forward with use (sliding idle expiry)
  expires_at      INTEGER NOT NULL,          -- Unix ms; the hard end, however active the session is
  revoked_at      INTEGER                    -- Unix ms of sign-out
);
CREATE INDEX web_sessions_expires ON web_sessions (expires_at);

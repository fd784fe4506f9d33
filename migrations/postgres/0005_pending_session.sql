-- As on SQLite (migrations/sqlite/0010_pending_session.sql): superseding looks up the pending
-- requests of one format, submitter and session at every create of a format that supersedes;
-- without this index that lookup walked every pending request of every format.
CREATE INDEX requests_pending_session ON requests (format, submitter, session, id)
  WHERE status = 'pending' AND session IS NOT NULL;

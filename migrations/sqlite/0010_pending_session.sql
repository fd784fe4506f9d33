-- Superseding (a new request from a session replaces that session's pending ones, formats.md)
-- looks up the pending requests of one format, submitter and session at every create of a
-- format that supersedes. Without this index that lookup walked every pending request of every
-- format: with 30,000 pending requests a create took tens of milliseconds.
CREATE INDEX requests_pending_session ON requests (format, submitter, session, id)
  WHERE status = 'pending' AND session IS NOT NULL;

-- The highest seq ever pruned from the change log. A daemon whose next unread seq is at or below
-- it could not read the log for longer than rows are kept: it has missed changes and resyncs
-- (src/storage/postgres/postgres-change-feed.ts). Raised by the statement that prunes.
CREATE TABLE changes_pruned (
  id  INTEGER PRIMARY KEY CHECK (id = 1),
  seq BIGINT NOT NULL
);

-- Every seq below the oldest row still kept is gone already (pruned, or rolled back); with no row
-- kept, every seq the log ever handed out.
INSERT INTO changes_pruned (id, seq)
VALUES (1, coalesce((SELECT min(seq) - 1 FROM changes), pg_sequence_last_value(pg_get_serial_sequence('changes', 'seq')), 0));

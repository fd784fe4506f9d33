-- Issue 10 (security): per-token grants, and blobs that are streamed, counted and swept.

-- What the admin allowed a submit token beyond creating requests: a JSON array of grant names
-- (resolve_upstream, timeout_approve), fixed at creation.
ALTER TABLE tokens ADD COLUMN grants TEXT NOT NULL DEFAULT '[]';

-- Blob bytes move to chunks so an upload is written as it arrives, never held whole in memory.
-- Rows of an upload in progress carry 'upload:<id>' as their hash until the bytes are complete.
CREATE TABLE blob_chunks (
  hash  TEXT NOT NULL,                       -- 'sha256:<hex>' of the whole blob
  n     INTEGER NOT NULL,                    -- 0-based chunk number
  bytes BLOB NOT NULL,
  PRIMARY KEY (hash, n)
);
INSERT INTO blob_chunks (hash, n, bytes) SELECT hash, 0, bytes FROM blobs;
ALTER TABLE blobs DROP COLUMN bytes;
-- Retention counts from the latest upload of the same bytes.
ALTER TABLE blobs ADD COLUMN uploaded_at INTEGER NOT NULL DEFAULT 0;
UPDATE blobs SET uploaded_at = created_at;
CREATE INDEX blobs_uploaded ON blobs (uploaded_at);

-- Who uploaded a blob: each uploader's quota counts it once. Blobs stored before this
-- migration have no uploader and count against no one.
CREATE TABLE blob_owners (
  owner TEXT NOT NULL,                       -- 'admin' or 'token:<token id>'
  hash  TEXT NOT NULL REFERENCES blobs (hash) ON DELETE CASCADE,
  size  INTEGER NOT NULL,
  PRIMARY KEY (owner, hash)
);
CREATE INDEX blob_owners_hash ON blob_owners (hash);

-- Which requests name which blobs in their previews; a named blob is never swept.
CREATE TABLE blob_refs (
  hash       TEXT NOT NULL,
  request_id TEXT NOT NULL REFERENCES requests (id),
  PRIMARY KEY (hash, request_id)
);
INSERT OR IGNORE INTO blob_refs (hash, request_id)
  SELECT j.value, r.id FROM requests r, json_tree(r.record, '$.previews') j
  WHERE j.type = 'text' AND j.key IN ('blob', 'before_blob', 'after_blob') AND j.value LIKE 'sha256:%';

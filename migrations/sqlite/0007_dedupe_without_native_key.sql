-- Pending dedupe keys hold for every request made without a native frame: handup requests and
-- requests made through the MCP server (format 'mcp'), not for handup alone. Native requests
-- carry their native key in dedupe_key and are kept unique by requests_native_key.
DROP INDEX requests_pending_dedupe;
CREATE UNIQUE INDEX requests_pending_dedupe ON requests (submitter, dedupe_key)
  WHERE status = 'pending' AND dedupe_key IS NOT NULL AND native_key IS NULL;

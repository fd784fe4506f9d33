import type { Db } from '../db/database.js';

/** Chunk rows of an upload in progress carry this prefix instead of a hash. */
export const STAGING_PREFIX = 'upload:';

const UNREFERENCED = 'FROM blobs b WHERE NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.hash = b.hash)';

/**
 * SQL only: blobs (one row per SHA-256), their bytes in numbered chunks, who uploaded them, and
 * which requests name them (`blob_refs`, written by the request repository). Callers hold the
 * transaction.
 */
export function createBlobRepository(db: Db) {
  const stmts = {
    insertChunk: db.prepare('INSERT INTO blob_chunks (hash, n, bytes) VALUES (?, ?, ?)'),
    renameChunks: db.prepare('UPDATE blob_chunks SET hash = ? WHERE hash = ?'),
    deleteChunks: db.prepare('DELETE FROM blob_chunks WHERE hash = ?'),
    deleteStaged: db.prepare(`DELETE FROM blob_chunks WHERE hash LIKE '${STAGING_PREFIX}%'`),
    chunk: db.prepare('SELECT bytes FROM blob_chunks WHERE hash = ? AND n = ?'),
    size: db.prepare('SELECT size FROM blobs WHERE hash = ?'),
    insertBlob: db.prepare('INSERT INTO blobs (hash, size, created_at, uploaded_at) VALUES (?, ?, ?, ?)'),
    touch: db.prepare('UPDATE blobs SET uploaded_at = MAX(uploaded_at, ?) WHERE hash = ?'),
    addOwner: db.prepare('INSERT OR IGNORE INTO blob_owners (owner, hash, size) VALUES (?, ?, ?)'),
    usage: db.prepare('SELECT COALESCE(SUM(size), 0) AS n FROM blob_owners WHERE owner = ?'),
    deleteBlob: db.prepare('DELETE FROM blobs WHERE hash = ?'),
  };
  const due = db.prepare(`SELECT hash ${UNREFERENCED} AND b.uploaded_at <= ? ORDER BY b.uploaded_at LIMIT ?`);
  const oldest = db.prepare(`SELECT MIN(b.uploaded_at) AS at ${UNREFERENCED}`);

  return {
    insertChunk: (key: string, n: number, bytes: Buffer) => void stmts.insertChunk.run(key, n, bytes),
    /** The chunks staged under `key` become the blob's. */
    renameChunks: (from: string, to: string) => void stmts.renameChunks.run(to, from),
    deleteChunks: (key: string) => void stmts.deleteChunks.run(key),
    /** Chunks of uploads a stopped daemon never finished. */
    deleteStaged: () => stmts.deleteStaged.run().changes,
    chunk: (hash: string, n: number) => (stmts.chunk.get(hash, n) as { bytes: Buffer } | undefined)?.bytes,
    size: (hash: string) => (stmts.size.get(hash) as { size: number } | undefined)?.size,
    insert: (hash: string, size: number, at: number) => void stmts.insertBlob.run(hash, size, at, at),
    touch: (hash: string, at: number) => void stmts.touch.run(at, hash),
    addOwner: (owner: string, hash: string, size: number) => void stmts.addOwner.run(owner, hash, size),
    /** Bytes of every stored blob `owner` uploaded. */
    usage: (owner: string) => (stmts.usage.get(owner) as { n: number }).n,
    /** Unreferenced blobs last uploaded at or before `cutoff`, oldest first. */
    due: (cutoff: number, limit: number) => (due.all(cutoff, limit) as Array<{ hash: string }>).map((r) => r.hash),
    /** When the longest-unreferenced blob was last uploaded, or null when every blob is named by a request. */
    oldestUnreferenced: () => (oldest.get() as { at: number | null }).at,
    /** Deletes a blob with its chunks and owners. */
    delete(hash: string): void {
      stmts.deleteChunks.run(hash);
      stmts.deleteBlob.run(hash);
    },
  };
}

export type BlobRepository = ReturnType<typeof createBlobRepository>;

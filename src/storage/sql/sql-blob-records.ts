import type { BlobRecords } from '../blob-records.js';
import type { SqlDialect, SqlRunner } from './sql-runner.js';

/** Chunk rows of an upload in progress carry this prefix and the upload's start time instead of a hash. */
export const STAGING_PREFIX = 'upload:';

const UNREFERENCED = 'FROM blobs b WHERE NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.hash = b.hash)';

/** Preview blobs over SQL (tables `blobs`, `blob_chunks`, `blob_owners`, `blob_refs`). */
export function createSqlBlobRecords(sql: SqlRunner, dialect: SqlDialect): BlobRecords {
  return {
    async size(hash) {
      const row = await sql.get<{ size: number }>('SELECT size FROM blobs WHERE hash = ?', [hash]);
      return row === undefined ? undefined : Number(row.size);
    },
    async chunk(hash, n) {
      return (await sql.get<{ bytes: Buffer }>('SELECT bytes FROM blob_chunks WHERE hash = ? AND n = ?', [hash, n]))?.bytes;
    },
    async usage(owner) {
      return Number((await sql.get<{ n: number }>('SELECT COALESCE(SUM(size), 0) AS n FROM blob_owners WHERE owner = ?', [owner]))?.n ?? 0);
    },
    async largestOwned(owner) {
      return Number((await sql.get<{ n: number }>('SELECT COALESCE(MAX(size), 0) AS n FROM blob_owners WHERE owner = ?', [owner]))?.n ?? 0);
    },
    async oldestUnreferenced() {
      const row = await sql.get<{ at: number | null }>(`SELECT MIN(b.uploaded_at) AS at ${UNREFERENCED}`);
      return row?.at ?? null;
    },
    async insertChunk(key, n, bytes) {
      await sql.run('INSERT INTO blob_chunks (hash, n, bytes) VALUES (?, ?, ?)', [key, n, bytes]);
    },
    async renameChunks(from, to) {
      await sql.run('UPDATE blob_chunks SET hash = ? WHERE hash = ?', [to, from]);
    },
    async deleteChunks(key) {
      await sql.run('DELETE FROM blob_chunks WHERE hash = ?', [key]);
    },
    // Staging keys are `upload:<13-digit start time>:<id>`, so they sort by time as text.
    deleteStaged: (before) =>
      sql.run(`DELETE FROM blob_chunks WHERE hash LIKE '${STAGING_PREFIX}%' AND hash < ?`, [`${STAGING_PREFIX}${String(before).padStart(13, '0')}`]),
    async insert(hash, size, at) {
      return (
        (await sql.run('INSERT INTO blobs (hash, size, created_at, uploaded_at) VALUES (?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING', [hash, size, at, at])) === 1
      );
    },
    async touch(hash, at) {
      return (await sql.run('UPDATE blobs SET uploaded_at = CASE WHEN uploaded_at > ? THEN uploaded_at ELSE ? END WHERE hash = ?', [at, at, hash])) === 1;
    },
    async addOwner(owner, hash, size) {
      return (await sql.run('INSERT INTO blob_owners (owner, hash, size) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [owner, hash, size])) === 1;
    },
    async addRefs(requestId, hashes) {
      for (const hash of hashes) await sql.run('INSERT INTO blob_refs (hash, request_id) VALUES (?, ?) ON CONFLICT DO NOTHING', [hash, requestId]);
    },
    async claimUnreferenced(cutoff, limit) {
      const rows = await sql.all<{ hash: string }>(`SELECT hash ${UNREFERENCED} AND b.uploaded_at <= ? ORDER BY b.uploaded_at LIMIT ?${dialect.skipLocked}`, [
        cutoff,
        limit,
      ]);
      return rows.map((r) => r.hash);
    },
    async delete(hash) {
      await sql.run('DELETE FROM blob_chunks WHERE hash = ?', [hash]);
      await sql.run('DELETE FROM blob_owners WHERE hash = ?', [hash]);
      await sql.run('DELETE FROM blobs WHERE hash = ?', [hash]);
    },
  };
}

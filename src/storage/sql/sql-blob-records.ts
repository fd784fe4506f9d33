import type { BlobRecords } from '../blob-records.js';
import type { SqlRunner } from './sql-runner.js';

/** Preview blobs over SQL (table `blobs`). */
export function createSqlBlobRecords(sql: SqlRunner): BlobRecords {
  return {
    async put(hash, bytes, at) {
      await sql.run('INSERT INTO blobs (hash, size, bytes, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING', [hash, bytes.length, bytes, at]);
    },
    async get(hash) {
      return (await sql.get<{ bytes: Buffer }>('SELECT bytes FROM blobs WHERE hash = ?', [hash]))?.bytes;
    },
  };
}

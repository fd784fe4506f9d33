import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import { writeTransaction, type Db } from '../db/database.js';

/** Content-addressed bytes for previews: stored once per SHA-256, never changed. */
export function createBlobRepository({ db, clock }: { db: Db; clock: Clock }) {
  const insert = db.prepare('INSERT OR IGNORE INTO blobs (hash, size, bytes, created_at) VALUES (?, ?, ?, ?)');
  const get = db.prepare('SELECT bytes FROM blobs WHERE hash = ?');
  return {
    put(bytes: Buffer): string {
      const hash = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
      writeTransaction(db, () => insert.run(hash, bytes.length, bytes, clock.now()));
      return hash;
    },
    get(hash: string): Buffer | undefined {
      return (get.get(hash) as { bytes: Buffer } | undefined)?.bytes;
    },
  };
}

export type BlobRepository = ReturnType<typeof createBlobRepository>;

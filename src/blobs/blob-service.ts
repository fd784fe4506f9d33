import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Store } from '../storage/store.js';

/** Content-addressed bytes for previews: stored once per SHA-256, never changed. */
export function createBlobService({ store, clock }: { store: Store; clock: Clock }) {
  return {
    async put(bytes: Buffer): Promise<string> {
      const hash = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
      await store.write((tx) => tx.blobs.put(hash, bytes, clock.now()));
      return hash;
    },
    get(hash: string): Promise<Buffer | undefined> {
      return store.blobs.get(hash);
    },
  };
}

export type BlobService = ReturnType<typeof createBlobService>;

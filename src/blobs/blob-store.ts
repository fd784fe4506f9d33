import { createHash } from 'node:crypto';
import type { Clock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { Store } from '../storage/store.js';

/** Chunks of an upload in progress are kept under `upload:<start time>:<id>` until it finishes. */
const stagingKey = (now: number) => `upload:${String(now).padStart(13, '0')}:${newId(now)}`;
/** An upload still unfinished this long after it started belongs to a daemon that stopped. */
export const STALE_UPLOAD_MS = 60 * 60_000;

/** The largest blob one upload may carry. */
export const BLOB_MAX_BYTES = 16 * 1024 * 1024;
/** Bytes per stored chunk: what one upload holds in memory at most, besides the socket's buffers. */
export const BLOB_CHUNK_BYTES = 1024 * 1024;

const SWEEP_BATCH = 500;

export interface BlobUpload {
  /** Adds bytes as they arrive; throws 413 as soon as the blob limit or the quota is passed. */
  write(bytes: Buffer): Promise<void>;
  /** Stores the blob (once per hash) and answers its hash. */
  finish(): Promise<{ hash: string; size: number }>;
  /** Drops what was staged; safe to call more than once and after finish. */
  abort(): Promise<void>;
  readonly size: number;
}

export interface BlobStoreOptions {
  store: Store;
  clock: Clock;
  /** `blobs.quota_per_token`: bytes a submit token may keep stored. */
  quotaBytes: number;
  maxBytes?: number;
  chunkBytes?: number;
}

/**
 * Content-addressed preview files. Uploads are written in chunks as they arrive, so neither a
 * large file nor many concurrent uploads are held in memory; each submit token's stored bytes
 * are capped, counting its uploads in flight on this daemon, so concurrent uploads cannot pass
 * the quota together (uploads in flight on other daemons count once they finish). The admin
 * has no quota.
 */
export function createBlobStore({ store, clock, quotaBytes, maxBytes = BLOB_MAX_BYTES, chunkBytes = BLOB_CHUNK_BYTES }: BlobStoreOptions) {
  /** Bytes staged by unfinished uploads, per owner. */
  const inFlight = new Map<string, number>();
  const adjust = (owner: string, by: number) => {
    const n = (inFlight.get(owner) ?? 0) + by;
    if (n === 0) inFlight.delete(owner);
    else inFlight.set(owner, n);
  };

  /** Owners with an upload running past their room (on this daemon): one at a time. */
  const pastRoom = new Set<string>();

  function tooLarge(): AppError {
    return new AppError('payload_too_large', `a blob may be at most ${maxBytes} bytes`);
  }

  function overQuota(usage: number): AppError {
    return new AppError(
      'quota_exceeded',
      `the blobs this token uploaded would pass its quota of ${quotaBytes} bytes (blobs.quota_per_token); blobs no request names are deleted after blobs.retention`,
      { owner_usage: usage, quota: quotaBytes },
    );
  }

  return {
    /**
     * Starts an upload for `owner` (a submitter key). `limited` applies the quota (submit
     * tokens); `declared` is the Content-Length, if any, checked before a byte is read.
     */
    async begin(owner: string, { limited, declared }: { limited: boolean; declared?: number | undefined }): Promise<BlobUpload> {
      if (declared !== undefined && declared > maxBytes) throw tooLarge();
      // Stored bytes are read once per upload; bytes in flight are this daemon's running count.
      const stored = limited ? await store.blobs.usage(owner) : 0;
      const room = () => quotaBytes - stored - (inFlight.get(owner) ?? 0);
      // Bytes the owner already stores count once: an upload past the room may be one of its own
      // blobs again (to restart its retention), which costs nothing. It may go on as far as the
      // largest of them, and is kept only if it is one (the digest is known at the end).
      const largest = limited ? await store.blobs.largestOwned(owner) : 0;
      // One such upload per owner at a time, so what is staged past the quota stays within one
      // blob's size however many uploads a token opens.
      let mustBeOwned = false;
      const past = (bytes: number) => {
        if (bytes > largest) throw overQuota(stored);
        if (mustBeOwned) return;
        if (pastRoom.has(owner)) throw overQuota(stored);
        pastRoom.add(owner);
        mustBeOwned = true;
      };
      const release = () => {
        if (mustBeOwned) pastRoom.delete(owner);
      };
      if (limited && declared !== undefined && declared > room()) past(declared);

      const key = stagingKey(clock.now());
      const hash = createHash('sha256');
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      let chunks = 0;
      let size = 0;
      let done = false;

      const flush = async () => {
        if (pendingBytes === 0) return;
        const bytes = Buffer.concat(pending, pendingBytes);
        const n = chunks++;
        pending = [];
        pendingBytes = 0;
        await store.write((tx) => tx.blobs.insertChunk(key, n, bytes));
      };

      const upload: BlobUpload = {
        get size() {
          return size;
        },
        async write(bytes) {
          if (done) throw new Error('the upload is over');
          if (size + bytes.length > maxBytes) throw tooLarge();
          if (limited && bytes.length > room()) past(size + bytes.length);
          size += bytes.length;
          adjust(owner, bytes.length);
          hash.update(bytes);
          pending.push(bytes);
          pendingBytes += bytes.length;
          if (pendingBytes >= chunkBytes) await flush();
        },
        async finish() {
          if (done) throw new Error('the upload is over');
          await flush();
          const digest = `sha256:${hash.digest('hex')}`;
          let refused = false;
          try {
            await store.write(async (tx) => {
              const now = clock.now();
              // The blob's row is claimed by inserting it, not after a look: of two uploads of the
              // same bytes finishing at once (on two daemons), exactly one keeps its chunks. Stored
              // already: keep the one copy and count retention from this upload, unless a sweep
              // deleted it meanwhile (the touch then waited for it and found nothing): claim it again.
              for (;;) {
                if (await tx.blobs.insert(digest, size, now)) {
                  await tx.blobs.renameChunks(key, digest);
                  break;
                }
                if (await tx.blobs.touch(digest, now)) {
                  await tx.blobs.deleteChunks(key);
                  break;
                }
              }
              if ((await tx.blobs.addOwner(owner, digest, size)) && mustBeOwned) {
                refused = true;
                throw overQuota(stored);
              }
            });
          } finally {
            done = true;
            adjust(owner, -size);
            release();
            // Rolled back: the staged chunks are not the blob's.
            if (refused) await store.write((tx) => tx.blobs.deleteChunks(key));
          }
          return { hash: digest, size };
        },
        async abort() {
          if (done) return;
          done = true;
          adjust(owner, -size);
          release();
          pending = [];
          await store.write((tx) => tx.blobs.deleteChunks(key));
        },
      };
      return upload;
    },

    /** The blob's size and its bytes chunk by chunk (read lazily), or undefined. */
    async open(hash: string): Promise<{ size: number; chunks: () => AsyncGenerator<Buffer> } | undefined> {
      const size = await store.blobs.size(hash);
      if (size === undefined) return undefined;
      return {
        size,
        async *chunks() {
          for (let n = 0; ; n++) {
            const bytes = await store.blobs.chunk(hash, n);
            if (!bytes) return;
            yield bytes;
          }
        },
      };
    },

    /** Deletes the blobs no request names that were last uploaded at or before `cutoff`; answers how many. */
    async sweep(cutoff: number): Promise<number> {
      let deleted = 0;
      for (;;) {
        const batch = await store.write(async (tx) => {
          const hashes = await tx.blobs.claimUnreferenced(cutoff, SWEEP_BATCH);
          for (const h of hashes) await tx.blobs.delete(h);
          return hashes.length;
        });
        deleted += batch;
        if (batch < SWEEP_BATCH) return deleted;
      }
    },

    /** When the longest-unreferenced blob was last uploaded (null: none is unreferenced). */
    oldestUnreferenced(): Promise<number | null> {
      return store.blobs.oldestUnreferenced();
    },

    /**
     * Drops chunks of uploads that never finished: a daemon stopped mid-upload. Uploads younger
     * than STALE_UPLOAD_MS are left alone, as another daemon on the store may still be receiving them.
     */
    discardUnfinished(): Promise<number> {
      return store.write((tx) => tx.blobs.deleteStaged(clock.now() - STALE_UPLOAD_MS));
    },
  };
}

export type BlobStore = ReturnType<typeof createBlobStore>;

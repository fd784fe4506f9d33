import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import { writeTransaction, type Db } from '../db/database.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { STAGING_PREFIX, type BlobRepository } from './blob-repository.js';

/** The largest blob one upload may carry. */
export const BLOB_MAX_BYTES = 16 * 1024 * 1024;
/** Bytes per stored chunk: what one upload holds in memory at most, besides the socket's buffers. */
export const BLOB_CHUNK_BYTES = 1024 * 1024;

const SWEEP_BATCH = 500;

export interface BlobUpload {
  /** Adds bytes as they arrive; throws 413 as soon as the blob limit or the quota is passed. */
  write(bytes: Buffer): void;
  /** Stores the blob (once per hash) and answers its hash. */
  finish(): { hash: string; size: number };
  /** Drops what was staged; safe to call more than once and after finish. */
  abort(): void;
  readonly size: number;
}

export interface BlobStoreOptions {
  db: Db;
  repo: BlobRepository;
  clock: Clock;
  /** `blobs.quota_per_token`: bytes a submit token may keep stored. */
  quotaBytes: number;
  maxBytes?: number;
  chunkBytes?: number;
}

/**
 * Content-addressed preview files. Uploads are written in chunks as they arrive, so neither a
 * large file nor many concurrent uploads are held in memory; each submit token's stored bytes
 * are capped, counting its uploads in flight, so concurrent uploads cannot pass the quota
 * together. The admin has no quota.
 */
export function createBlobStore({ db, repo, clock, quotaBytes, maxBytes = BLOB_MAX_BYTES, chunkBytes = BLOB_CHUNK_BYTES }: BlobStoreOptions) {
  /** Bytes staged by unfinished uploads, per owner. */
  const inFlight = new Map<string, number>();
  const adjust = (owner: string, by: number) => {
    const n = (inFlight.get(owner) ?? 0) + by;
    if (n === 0) inFlight.delete(owner);
    else inFlight.set(owner, n);
  };

  function tooLarge(): AppError {
    return new AppError('payload_too_large', `a blob may be at most ${maxBytes} bytes`);
  }

  function overQuota(owner: string): AppError {
    return new AppError(
      'quota_exceeded',
      `the blobs this token uploaded would pass its quota of ${quotaBytes} bytes (blobs.quota_per_token); blobs no request names are deleted after blobs.retention`,
      { owner_usage: repo.usage(owner), quota: quotaBytes },
    );
  }

  return {
    /**
     * Starts an upload for `owner` (a submitter key). `limited` applies the quota (submit
     * tokens); `declared` is the Content-Length, if any, checked before a byte is read.
     */
    begin(owner: string, { limited, declared }: { limited: boolean; declared?: number | undefined }): BlobUpload {
      if (declared !== undefined && declared > maxBytes) throw tooLarge();
      const room = () => quotaBytes - repo.usage(owner) - (inFlight.get(owner) ?? 0);
      if (limited && declared !== undefined && declared > room()) throw overQuota(owner);

      const key = `${STAGING_PREFIX}${newId(clock.now())}`;
      const hash = createHash('sha256');
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      let chunks = 0;
      let size = 0;
      let done = false;

      const flush = () => {
        if (pendingBytes === 0) return;
        const bytes = Buffer.concat(pending, pendingBytes);
        pending = [];
        pendingBytes = 0;
        writeTransaction(db, () => repo.insertChunk(key, chunks, bytes));
        chunks++;
      };

      const upload: BlobUpload = {
        get size() {
          return size;
        },
        write(bytes) {
          if (done) throw new Error('the upload is over');
          if (size + bytes.length > maxBytes) throw tooLarge();
          if (limited && bytes.length > room()) throw overQuota(owner);
          size += bytes.length;
          adjust(owner, bytes.length);
          hash.update(bytes);
          pending.push(bytes);
          pendingBytes += bytes.length;
          if (pendingBytes >= chunkBytes) flush();
        },
        finish() {
          if (done) throw new Error('the upload is over');
          flush();
          const digest = `sha256:${hash.digest('hex')}`;
          try {
            writeTransaction(db, () => {
              const now = clock.now();
              if (repo.size(digest) === undefined) {
                repo.renameChunks(key, digest);
                repo.insert(digest, size, now);
              } else {
                // Stored already: keep the one copy, and count retention from this upload.
                repo.deleteChunks(key);
                repo.touch(digest, now);
              }
              repo.addOwner(owner, digest, size);
            });
          } finally {
            done = true;
            adjust(owner, -size);
          }
          return { hash: digest, size };
        },
        abort() {
          if (done) return;
          done = true;
          adjust(owner, -size);
          pending = [];
          writeTransaction(db, () => repo.deleteChunks(key));
        },
      };
      return upload;
    },

    /** The blob's size and its bytes chunk by chunk (read lazily), or undefined. */
    open(hash: string): { size: number; chunks: () => Generator<Buffer> } | undefined {
      const size = repo.size(hash);
      if (size === undefined) return undefined;
      return {
        size,
        *chunks() {
          for (let n = 0; ; n++) {
            const bytes = repo.chunk(hash, n);
            if (!bytes) return;
            yield bytes;
          }
        },
      };
    },

    /** Deletes the blobs no request names that were last uploaded at or before `cutoff`; answers how many. */
    sweep(cutoff: number): number {
      let deleted = 0;
      for (;;) {
        const batch = writeTransaction(db, () => {
          const hashes = repo.due(cutoff, SWEEP_BATCH);
          for (const h of hashes) repo.delete(h);
          return hashes.length;
        });
        deleted += batch;
        if (batch < SWEEP_BATCH) return deleted;
      }
    },

    /** When the longest-unreferenced blob was last uploaded (null: none is unreferenced). */
    oldestUnreferenced(): number | null {
      return repo.oldestUnreferenced();
    },

    /** Drops chunks of uploads that never finished (a daemon stopped mid-upload); call before serving. */
    discardUnfinished(): number {
      return writeTransaction(db, () => repo.deleteStaged());
    },
  };
}

export type BlobStore = ReturnType<typeof createBlobStore>;

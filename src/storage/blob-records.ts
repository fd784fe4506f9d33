/**
 * Preview files: one row per SHA-256 with its bytes in numbered chunks, who uploaded it (each
 * uploader's quota counts it once), and which requests name it (a named blob is kept).
 */
export interface BlobReads {
  /** The stored blob's size, or undefined. */
  size(hash: string): Promise<number | undefined>;
  chunk(hash: string, n: number): Promise<Buffer | undefined>;
  /** Bytes of every stored blob `owner` uploaded. */
  usage(owner: string): Promise<number>;
  /** The size of the largest stored blob `owner` uploaded (0 when none). */
  largestOwned(owner: string): Promise<number>;
  /** When the longest-unreferenced blob was last uploaded, or null when every blob is named by a request. */
  oldestUnreferenced(): Promise<number | null>;
}

export interface BlobRecords extends BlobReads {
  /** Stores one chunk of an upload in progress under its staging key. */
  insertChunk(key: string, n: number, bytes: Buffer): Promise<void>;
  /** The chunks staged under `from` become blob `to`'s. */
  renameChunks(from: string, to: string): Promise<void>;
  deleteChunks(key: string): Promise<void>;
  /** Drops chunks staged before `before` (a staging key's time) by uploads that never finished; answers how many. */
  deleteStaged(before: number): Promise<number>;
  /** Creates blob `hash`'s row; false (nothing written) when it is stored already, whoever stored it first. */
  insert(hash: string, size: number, at: number): Promise<boolean>;
  /** Another upload of the same bytes: retention counts from the latest. False when there is no such blob (swept). */
  touch(hash: string, at: number): Promise<boolean>;
  /** False (nothing written) when `owner` already counts this blob. */
  addOwner(owner: string, hash: string, size: number): Promise<boolean>;
  /** Records that a request names these blobs in its previews. */
  addRefs(requestId: string, hashes: readonly string[]): Promise<void>;
  /** Unreferenced blobs last uploaded at or before `cutoff`, oldest first, claimed for this transaction. */
  claimUnreferenced(cutoff: number, limit: number): Promise<string[]>;
  /** Deletes a blob with its chunks and owners. */
  delete(hash: string): Promise<void>;
}

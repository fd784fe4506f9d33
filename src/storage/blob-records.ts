/** Content-addressed bytes for previews: stored once per SHA-256, never changed. */
export interface BlobReads {
  get(hash: string): Promise<Buffer | undefined>;
}

export interface BlobRecords extends BlobReads {
  /** Stores `bytes` under `hash` unless already there. */
  put(hash: string, bytes: Buffer, at: number): Promise<void>;
}

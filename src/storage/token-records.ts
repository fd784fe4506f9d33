/** Submit tokens, stored as SHA-256 digests of their secrets. */
export interface TokenRow {
  id: string;
  name: string;
  digest: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
  /** Grant names given at creation (names a newer version wrote are kept as they are). */
  grants: string[];
}

export interface TokenReads {
  byDigest(digest: string): Promise<TokenRow | undefined>;
  /** Tokens not revoked, by name. */
  listLive(): Promise<TokenRow[]>;
  liveByName(name: string): Promise<TokenRow | undefined>;
}

export interface TokenRecords extends TokenReads {
  /** False (and nothing written) when a live token already has the name, whoever wrote it first. */
  insert(row: Pick<TokenRow, 'id' | 'name' | 'digest' | 'created_at' | 'expires_at' | 'grants'>): Promise<boolean>;
  revoke(id: string, at: number): Promise<boolean>;
  touch(id: string, at: number): Promise<void>;
}

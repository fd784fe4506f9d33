/** Sessions of the reviewer web page; the secret is stored only as its SHA-256. */
export interface WebSessionRow {
  id: string;
  digest: string;
  /** What signed in (a fingerprint of the admin token): a rotated token ends its sessions. */
  credential: string;
  created_at: number;
  last_seen_at: number;
  idle_expires_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export interface WebSessionReads {
  byDigest(digest: string): Promise<WebSessionRow | undefined>;
  byId(id: string): Promise<WebSessionRow | undefined>;
}

export interface WebSessionRecords extends WebSessionReads {
  insert(row: Omit<WebSessionRow, 'revoked_at'>): Promise<void>;
  /** Records a use: slides the idle expiry. */
  touch(id: string, at: number, idleExpiresAt: number): Promise<void>;
  /** Ends a session; false when it had already ended. */
  revoke(id: string, at: number): Promise<boolean>;
  /** Forgets sessions that can no longer be used; answers how many. */
  deleteEnded(now: number): Promise<number>;
  /** Forgets sessions signed in with another credential than this one; answers how many. */
  deleteOtherCredentials(credential: string): Promise<number>;
}

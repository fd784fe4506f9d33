/**
 * Keys every daemon on the store shares (the decision-link signing key): kept in the database,
 * not a data directory, so a link made by one daemon is verified by any other.
 */
export interface DaemonKeyReads {
  get(name: string): Promise<string | undefined>;
}

export interface DaemonKeys extends DaemonKeyReads {
  /** Stores `secret` under `name` unless a key is already there; resolves with the stored one. */
  ensure(name: string, secret: string, at: number): Promise<string>;
  /** Replaces the key (rotation): everything signed with the old one stops verifying. */
  replace(name: string, secret: string, at: number): Promise<void>;
}

import type { BlobReads, BlobRecords } from './blob-records.js';
import type { ClusterNodes } from './cluster-nodes.js';
import type { Counters } from './counters.js';
import type { DaemonKeyReads, DaemonKeys } from './daemon-keys.js';
import type { DeliveryOutbox, DeliveryReads } from './delivery-outbox.js';
import type { MuteReads, MuteRecords } from './mute-records.js';
import type { BurstReads, BurstRecords } from './notify-bursts.js';
import type { PolicyReads, PolicyRecords } from './policy-records.js';
import type { RateCounters } from './rate-counters.js';
import type { NoticeReads, NoticeRecords } from './request-notices.js';
import type { RequestReads, RequestRecords } from './request-records.js';
import type { TokenReads, TokenRecords } from './token-records.js';
import type { WebSessionReads, WebSessionRecords } from './web-session-records.js';

/** How `Store.write` commits. */
export interface WriteOptions {
  /**
   * false: the write may be lost in a power failure or an operating-system crash (never in a
   * crash or kill of the daemon alone), and its caller treats that loss as the daemon having
   * stopped just before it. SQLite then answers it at its COMMIT without a sync of its own; the
   * next sync (a later write's, or the checkpointer's) makes it durable. PostgreSQL commits
   * every write durably. Default true.
   */
  durable?: boolean;
}

/**
 * The storage port: everything the daemon keeps, named for what it holds. Nothing above it sees
 * SQL, a driver, or which database it runs on. Two implementations: SQLite (one daemon, group
 * commit) and PostgreSQL (several daemons on one database). See docs/cluster.md.
 */
export interface Store {
  /** Reads outside a transaction. They see committed data only, never a write still in flight. */
  readonly requests: RequestReads;
  readonly deliveries: DeliveryReads;
  readonly tokens: TokenReads;
  readonly blobs: BlobReads;
  readonly webSessions: WebSessionReads;
  /** Stored rules, rule hits, auto mode, the policy audit log. */
  readonly policy: PolicyReads;
  /** The daemons sharing this store (a heartbeat table). */
  readonly nodes: ClusterNodes;
  /** Per-key create counters, shared by every daemon on the store. */
  readonly rates: RateCounters;
  /** Notifications: mutes, burst windows, reminder/expiring schedules, the link key. */
  readonly mutes: MuteReads;
  readonly bursts: BurstReads;
  readonly notices: NoticeReads;
  readonly keys: DaemonKeyReads;

  /**
   * Runs `work` in one write transaction and resolves with its result once the transaction has
   * committed (rejects, with nothing written, if `work` throws or the commit fails). `work` must
   * do nothing but talk to `tx`: no network, no timers, no other store calls, because the
   * transaction holds the database's write lock (SQLite) or a pooled connection (PostgreSQL).
   */
  write<T>(work: (tx: WriteTx) => Promise<T>, options?: WriteOptions): Promise<T>;

  /**
   * Changes committed by OTHER daemons on this store, as they announced them (`WriteTx.announce`).
   * A daemon never hears its own. Delivery is at least once and may be late (a lost notification
   * is caught up by polling). Changes the daemon could not read before they were pruned (it was
   * cut off from the database for longer than they are kept) come as one `changes.lost` instead.
   */
  onRemoteChange(listener: (change: Change) => void): () => void;

  /** Resolves when the database answers; rejects with 503 `storage_unavailable` when it cannot be reached. */
  ping(): Promise<void>;

  /** What the store is, for health reports: never a password or a path with secrets. */
  readonly info: StoreInfo;

  close(): Promise<void>;
}

export interface WriteTx {
  readonly requests: RequestRecords;
  readonly deliveries: DeliveryOutbox;
  readonly tokens: TokenRecords;
  readonly blobs: BlobRecords;
  readonly webSessions: WebSessionRecords;
  readonly counters: Counters;
  readonly mutes: MuteRecords;
  readonly bursts: BurstRecords;
  readonly notices: NoticeRecords;
  readonly keys: DaemonKeys;
  readonly policy: PolicyRecords;
  /** Tells the other daemons on this store about a change, if and when this transaction commits. */
  announce(change: Change): void;
  /** Runs `cb` after this transaction has committed; never if it rolls back. */
  afterCommit(cb: () => void): void;
}

/** The change a daemon hears instead of changes pruned from the log before it read them (see `Change.since`). */
export const CHANGES_LOST = 'changes.lost';

/** A committed change other daemons must hear of: a request's transition, or a topic that changed. */
export interface Change {
  /** `request.created`, `request.decided`, …, or a topic such as `rules.changed`. */
  type: string;
  /** The request concerned, for request events. */
  requestId?: string | undefined;
  /**
   * On `changes.lost` (changes pruned from the log before this daemon read them): when it last
   * read the whole log (Unix ms, this daemon's clock). What changed after that may be unheard.
   */
  since?: number | undefined;
}

export interface StoreInfo {
  /** `sqlite` or `postgres`. */
  kind: string;
  /** Where, without credentials: a file name or `host:port/database`. */
  location: string;
}

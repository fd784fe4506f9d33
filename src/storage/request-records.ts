import type { HandupRequest } from '../requests/request-schema.js';

/**
 * A request as read back: the served record plus the broker metadata the daemon works with.
 * The native frame as received is stored beside it (NewRequest) but not read back with it:
 * nothing the daemon does needs it, and it is often the row's largest column.
 */
export interface StoredRequest {
  record: HandupRequest;
  format: string;
  submitter: string;
  nativeKey: string | null;
  nativeContext: unknown;
  nativeReply: unknown;
  resolvedAt: number | null;
}

/** A request to insert: as read back, plus the native frame as received (absent: none). */
export interface NewRequest extends StoredRequest {
  nativeFrame?: unknown;
}

export interface AuditEntry {
  id: number;
  request_id: string;
  event: string;
  actor: string;
  at: number;
  details?: unknown;
}

export interface ListFilters {
  status?: string[] | undefined;
  kind?: string[] | undefined;
  format?: string[] | undefined;
  agent?: string[] | undefined;
  session?: string[] | undefined;
  submitter?: string | undefined;
  limit: number;
}

export interface HistoryFilters {
  /** Terminal statuses, and `auto` for requests no person decided (rule, auto mode, decide hook). */
  outcome?: string[] | undefined;
  kind?: string[] | undefined;
  agent?: string[] | undefined;
  q?: string | undefined;
  before?: { resolvedAt: number; id: string } | undefined;
  limit: number;
}

/** Reading requests and their audit trail. */
export interface RequestReads {
  get(id: string): Promise<StoredRequest | undefined>;
  /** The records and formats of the requests among `ids` that exist, in no order (one read for a batch). */
  records(ids: readonly string[]): Promise<Array<Pick<StoredRequest, 'record' | 'format'>>>;
  /** Newest first. */
  list(filters: ListFilters): Promise<StoredRequest[]>;
  /** Ended requests, newest resolution first. */
  history(filters: HistoryFilters): Promise<StoredRequest[]>;
  /** Oldest first. */
  audit(requestId: string): Promise<AuditEntry[]>;
  /** The native frame a request was created from, as received; undefined for an unknown id, null without one. */
  nativeFrame(id: string): Promise<unknown>;
  /** The request a submitter's native frame created, if any (native keys are permanent). */
  findByNativeKey(format: string, submitter: string, nativeKey: string): Promise<StoredRequest | undefined>;
  /** This submitter's pending request with the dedupe key, among requests without a native key. */
  findPendingByDedupe(submitter: string, dedupeKey: string): Promise<StoredRequest | undefined>;
  /** This submitter's pending requests of one format whose `source.session` is `session`, oldest first. */
  findPendingBySession(format: string, submitter: string, session: string): Promise<StoredRequest[]>;
  /** The earliest `expires_at` of a pending request, or null. */
  nextDeadline(): Promise<number | null>;
  /** How many requests are pending, across every daemon on the store (read at each metrics scrape). */
  countPending(): Promise<number>;
}

/** Writing requests: only inside `Store.write`. */
export interface RequestRecords extends RequestReads {
  /**
   * Inserts a new request. False, with nothing written, when its native key or its pending
   * dedupe key is already taken (possibly by another daemon that committed it a moment ago):
   * the caller reads the winner and answers with it.
   */
  insert(stored: NewRequest): Promise<boolean>;
  /**
   * Inserts a new request whose native or dedupe key was just found free outside the
   * transaction, sent with the transaction's next statement or its commit (one round trip
   * fewer on PostgreSQL). If a write that committed first took the key meanwhile, the whole
   * write fails with RequestKeyTaken, when this runs or at commit, and nothing of it stays.
   */
  add(stored: NewRequest): Promise<void>;
  /** Moves a pending request to its terminal record; false when it was no longer pending. */
  finish(record: HandupRequest, resolvedAt: number): Promise<boolean>;
  setNativeReply(id: string, reply: unknown): Promise<void>;
  /**
   * Frees a native key: the request holding it keeps it with its own id appended, so a later
   * frame with the key creates a new request. False when no request of this submitter held it.
   */
  releaseNativeKey(format: string, submitter: string, nativeKey: string): Promise<boolean>;
  /**
   * Holds this submitter's native session until the transaction ends: another daemon's create
   * in the same session waits, so each sees the other's request when it decides what supersedes
   * what.
   */
  lockSession(format: string, submitter: string, session: string): Promise<void>;
  /**
   * Pending requests due at `now`, oldest deadline first, held for this transaction: another
   * daemon sweeping at the same moment skips them rather than waiting.
   */
  claimDue(now: number, limit: number): Promise<StoredRequest[]>;
  appendAudit(requestId: string, event: string, actor: string, at: number, details?: unknown): Promise<void>;
}

/** The failure of a write whose `add` found its request's key taken (see RequestRecords.add). */
export class RequestKeyTaken extends Error {
  constructor(options?: ErrorOptions) {
    super("the request's native or dedupe key was taken by a write that committed first", options);
    this.name = 'RequestKeyTaken';
  }
}

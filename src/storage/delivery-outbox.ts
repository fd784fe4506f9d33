/**
 * The delivery outbox: one delivery per terminal transition of a request with a callback_url,
 * and one per notification to a hook, with the same leases, retries and records.
 */

export type DeliveryState = 'pending' | 'leased' | 'delivered' | 'failed';

/** What an attempt ended with; null fields while it is in flight. */
export type AttemptErrorClass =
  | 'http_status'
  | 'timeout'
  | 'network'
  | 'dns'
  | 'address_not_allowed'
  | 'url_not_allowed'
  | 'max_age'
  | 'interrupted'
  | 'exit_status'
  | 'hook_removed'
  | 'render';

export interface NewDelivery {
  id: string;
  requestId: string;
  type: string;
  /** The hook this delivery is for; null or absent: the request's callback_url. */
  hook?: string | null;
  /** Where it goes: the callback_url, or for a hook a description without secrets (the hook's target is read from the config at each attempt). */
  url: string;
  body: string;
  createdAt: number;
}

/** A row handed to a worker by `leaseDue`: everything one attempt needs. */
export interface LeasedDelivery extends NewDelivery {
  hook: string | null;
  /** This attempt's number (1-based). */
  attempt: number;
}

/**
 * Which due deliveries a worker has room for: `leaseDue` and `nextDue` leave out the rest, so a
 * worker whose slots for one kind are full neither leases such a row nor wakes up for one.
 */
export interface DeliveryFilter {
  /** Callbacks (rows with no hook: the request's callback_url). */
  callbacks: boolean;
  /** Hook messages. */
  hooks: boolean;
  /** Hooks whose messages are left out even when `hooks` is true (their slots are full). */
  busyHooks: readonly string[];
}

export interface AttemptView {
  n: number;
  started_at: number;
  status: number | null;
  latency_ms: number | null;
  error_class: string | null;
  error: string | null;
}

export interface DeliveryView {
  id: string;
  request_id: string;
  type: string;
  url: string;
  state: DeliveryState;
  created_at: number;
  next_attempt_at: number | null;
  finished_at: number | null;
  last_error: string | null;
  attempts: AttemptView[];
}

export interface AttemptEnd {
  status: number | null;
  latencyMs: number | null;
  errorClass: AttemptErrorClass | null;
  error: string | null;
}

export interface DeliveryReads {
  /** The earliest `next_attempt_at` of a pending delivery (of those `filter` admits), or null. */
  nextDue(filter?: DeliveryFilter): Promise<number | null>;
  /** The earliest `lease_until` of a leased delivery, or null (when an abandoned lease may be taken over). */
  nextLeaseEnd(): Promise<number | null>;
  /** A request's callback deliveries, oldest first. */
  listForRequest(requestId: string): Promise<DeliveryView[]>;
  /** A hook's deliveries, newest first. */
  listForHook(hook: string, limit: number): Promise<DeliveryView[]>;
}

export interface DeliveryOutbox extends DeliveryReads {
  insert(delivery: NewDelivery): Promise<void>;
  /**
   * Leases the oldest due pending delivery (of those `filter` admits) for `node` until
   * `leaseUntil`, counts the attempt and opens its attempt row; undefined when nothing is due.
   * Two daemons never lease one row.
   */
  leaseDue(now: number, leaseUntil: number, node: string, filter?: DeliveryFilter): Promise<LeasedDelivery | undefined>;
  /**
   * Records how attempt `n` ended. With `node`, only while that daemon still holds the lease for
   * that attempt: false when it lost it (the attempt was marked interrupted and taken over, even
   * if the same daemon leased the row again), changing nothing.
   */
  endAttempt(id: string, n: number, end: AttemptEnd, node?: string): Promise<boolean>;
  /** Attempts that count against the retry schedule: every one but the interrupted. */
  countedAttempts(id: string): Promise<number>;
  /**
   * Back to pending, due at `at` (a retry, or an interrupted attempt to redo). With `node`, only
   * while that daemon still holds the lease (false otherwise), as for `finish`.
   */
  release(id: string, at: number, error: string | null, node?: string): Promise<boolean>;
  finish(id: string, state: 'delivered' | 'failed', at: number, error: string | null, node?: string): Promise<boolean>;
  /**
   * Takes back leases whose holder is gone: past `lease_until`, or held by a daemon not in
   * `liveNodes` (null: who is live cannot be told now, so only past `lease_until`). Their open
   * attempts are marked interrupted and the rows are due at `now`, so another daemon retries
   * them with the same delivery id. Returns how many.
   */
  reclaimAbandoned(now: number, liveNodes: readonly string[] | null): Promise<number>;
}

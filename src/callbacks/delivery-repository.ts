import type { Db } from '../db/database.js';
import type { TerminalEventType } from '../requests/request-service.js';

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
  | 'interrupted';

export interface NewDelivery {
  id: string;
  requestId: string;
  type: TerminalEventType;
  url: string;
  body: string;
  createdAt: number;
}

/** A row handed to the worker by `leaseDue`: everything one attempt needs. */
export interface LeasedDelivery extends NewDelivery {
  /** This attempt's number (1-based). */
  attempt: number;
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
  type: TerminalEventType;
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

interface DeliveryRow {
  id: string;
  request_id: string;
  type: TerminalEventType;
  url: string;
  body: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: number | null;
  lease_until: number | null;
  created_at: number;
  finished_at: number | null;
  last_error: string | null;
}

/** SQL only for the callback outbox: no rules, no clock. Callers hold the transaction. */
export function createDeliveryRepository(db: Db) {
  const stmts = {
    insert: db.prepare(`INSERT INTO callback_deliveries (id, request_id, type, url, body, state, attempts, next_attempt_at, created_at)
      VALUES (@id, @requestId, @type, @url, @body, 'pending', 0, @createdAt, @createdAt)`),
    nextDueId: db.prepare(`SELECT id FROM callback_deliveries WHERE state = 'pending' AND next_attempt_at <= ?
      ORDER BY next_attempt_at, id LIMIT 1`),
    lease: db.prepare(`UPDATE callback_deliveries SET state = 'leased', lease_until = @leaseUntil, next_attempt_at = NULL, attempts = attempts + 1
      WHERE id = @id AND state = 'pending' RETURNING *`),
    insertAttempt: db.prepare('INSERT INTO callback_attempts (delivery_id, n, started_at) VALUES (?, ?, ?)'),
    endAttempt: db.prepare(`UPDATE callback_attempts SET status = @status, latency_ms = @latencyMs, error_class = @errorClass, error = @error
      WHERE delivery_id = @id AND n = @n`),
    interruptOpenAttempts: db.prepare(`UPDATE callback_attempts SET error_class = 'interrupted', error = ?
      WHERE delivery_id = ? AND latency_ms IS NULL AND error_class IS NULL AND status IS NULL`),
    countedAttempts: db.prepare(`SELECT COUNT(*) AS n FROM callback_attempts WHERE delivery_id = ? AND (error_class IS NULL OR error_class <> 'interrupted')`),
    release: db.prepare(`UPDATE callback_deliveries SET state = 'pending', lease_until = NULL, next_attempt_at = @at, last_error = coalesce(@error, last_error)
      WHERE id = @id AND state = 'leased'`),
    finish: db.prepare(`UPDATE callback_deliveries SET state = @state, lease_until = NULL, next_attempt_at = NULL, finished_at = @at, last_error = @error
      WHERE id = @id AND state = 'leased'`),
    leasedIds: db.prepare(`SELECT id FROM callback_deliveries WHERE state = 'leased'`),
    nextDue: db.prepare(`SELECT MIN(next_attempt_at) AS at FROM callback_deliveries WHERE state = 'pending'`),
    byRequest: db.prepare('SELECT * FROM callback_deliveries WHERE request_id = ? ORDER BY id'),
    attemptsOf: db.prepare('SELECT n, started_at, status, latency_ms, error_class, error FROM callback_attempts WHERE delivery_id = ? ORDER BY n'),
  };

  return {
    insert(d: NewDelivery): void {
      stmts.insert.run(d);
    },

    /**
     * Leases the oldest due pending row, counts the attempt and opens its attempt row.
     * Returns undefined when nothing is due. `lease_until` records how long the holder may
     * take; leases left by a crashed process are reclaimed by `reclaimLeases` at start-up.
     */
    leaseDue(now: number, leaseUntil: number): LeasedDelivery | undefined {
      const due = stmts.nextDueId.get(now) as { id: string } | undefined;
      if (!due) return undefined;
      const row = stmts.lease.get({ id: due.id, leaseUntil }) as DeliveryRow | undefined;
      if (!row) return undefined;
      stmts.insertAttempt.run(row.id, row.attempts, now);
      return { id: row.id, requestId: row.request_id, type: row.type, url: row.url, body: row.body, createdAt: row.created_at, attempt: row.attempts };
    },

    endAttempt(id: string, n: number, end: AttemptEnd): void {
      stmts.endAttempt.run({ id, n, status: end.status, latencyMs: end.latencyMs === null ? null : Math.round(end.latencyMs), errorClass: end.errorClass, error: end.error });
    },

    /** Attempts that count against the retry schedule: every one but the interrupted. */
    countedAttempts(id: string): number {
      return (stmts.countedAttempts.get(id) as { n: number }).n;
    },

    /** Back to pending, due at `at` (a retry, or an interrupted attempt to redo). */
    release(id: string, at: number, error: string | null): boolean {
      return stmts.release.run({ id, at, error }).changes === 1;
    },

    finish(id: string, state: 'delivered' | 'failed', at: number, error: string | null): boolean {
      return stmts.finish.run({ id, state, at, error }).changes === 1;
    },

    /**
     * At start-up every lease belongs to a process that is gone (one daemon per data dir): its
     * open attempts are marked interrupted and the rows are due again at once.
     */
    reclaimLeases(now: number): number {
      const ids = (stmts.leasedIds.all() as Array<{ id: string }>).map((r) => r.id);
      for (const id of ids) {
        stmts.interruptOpenAttempts.run('the daemon stopped before the attempt finished', id);
        stmts.release.run({ id, at: now, error: null });
      }
      return ids.length;
    },

    nextDue(): number | null {
      return (stmts.nextDue.get() as { at: number | null }).at;
    },

    listForRequest(requestId: string): DeliveryView[] {
      return (stmts.byRequest.all(requestId) as DeliveryRow[]).map((row) => ({
        id: row.id,
        request_id: row.request_id,
        type: row.type,
        url: row.url,
        state: row.state,
        created_at: row.created_at,
        next_attempt_at: row.next_attempt_at,
        finished_at: row.finished_at,
        last_error: row.last_error,
        attempts: stmts.attemptsOf.all(row.id) as AttemptView[],
      }));
    },
  };
}

export type DeliveryRepository = ReturnType<typeof createDeliveryRepository>;

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CallbackAttempt } from '../callbacks/callback-dispatcher.js';
import type { RequestEvent } from '../requests/request-events.js';
import type { HandupRequest } from '../requests/request-schema.js';
import type { TransactionOutcome } from './timed-store.js';

export interface MetricsOptions {
  version: string;
  /** This daemon's id (`GET /v1/cluster`). */
  node: string;
  /** `sqlite` or `postgres`. */
  store: string;
  /** Pending requests in the store, read at each scrape. */
  pending: () => Promise<number>;
  /** Reviewers' `/v1/events` streams open on this daemon. */
  eventSubscribers: () => number;
}

/** Who ended a request, as a bounded label: the kind of `decision.decided_by`, never a name. */
const DECIDERS = new Set(['admin', 'token', 'rule', 'auto', 'hook', 'link', 'upstream', 'timeout', 'mute']);

export function deciderOf(record: HandupRequest): string {
  const by = record.decision?.decided_by;
  if (!by) return 'none';
  const kind = by.split(':', 1)[0]!;
  return DECIDERS.has(kind) ? kind : 'other';
}

// Seconds: rules and auto mode decide at once, people in seconds to hours, timeouts up to a day.
const DECISION_BUCKETS = [0.1, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400];
const TRANSACTION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * The process's own metrics (CPU, memory, event-loop lag, GC), once per process however many
 * daemons it runs (tests run many): each would otherwise add its own event-loop monitor.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * This daemon's metrics in the Prometheus text format (`GET /v1/metrics`). Counters count what
 * happened on this daemon only (events relayed from other daemons are not counted again), so
 * summing over daemons gives the cluster's totals; the pending gauge is read from the shared
 * store and is the same on every daemon.
 */
export function createMetrics(o: MetricsOptions) {
  const registry = new Registry();
  const registers = [registry];
  processMetrics();

  new Gauge({
    name: 'countersign_info',
    help: "Always 1: this daemon's version, store kind and node id",
    labelNames: ['version', 'store', 'node'] as const,
    registers,
  }).set({ version: o.version, store: o.store, node: o.node }, 1);
  const created = new Counter({
    name: 'countersign_requests_created_total',
    help: 'Requests created on this daemon, by wire format and kind',
    labelNames: ['format', 'kind'] as const,
    registers,
  });
  const ended = new Counter({
    name: 'countersign_requests_ended_total',
    help: 'Terminal transitions on this daemon, by status and by who ended the request (decided_by kind; none when nobody decided)',
    labelNames: ['status', 'decider'] as const,
    registers,
  });
  const decisionTime = new Histogram({
    name: 'countersign_time_to_decision_seconds',
    help: 'From creation to decision (decided_at - created_at) of requests decided on this daemon, by decider',
    labelNames: ['decider'] as const,
    buckets: DECISION_BUCKETS,
    registers,
  });
  new Gauge({
    name: 'countersign_requests_pending',
    help: 'Requests pending in the store (shared by every daemon on it)',
    registers,
    async collect() {
      this.set(await o.pending());
    },
  });
  const attempts = new Counter({
    name: 'countersign_callback_attempts_total',
    help: 'Delivery attempts made by this daemon, by target (callback or hook) and result',
    labelNames: ['target', 'result'] as const,
    registers,
  });
  const failures = new Counter({
    name: 'countersign_callback_failures_total',
    help: 'Deliveries given up by this daemon, by target and reason',
    labelNames: ['target', 'reason'] as const,
    registers,
  });
  let bridges = 0;
  new Gauge({
    name: 'countersign_websocket_subscribers',
    help: "WebSocket connections open on this daemon: reviewers' event streams and bridges",
    labelNames: ['socket'] as const,
    registers,
    collect() {
      this.set({ socket: 'events' }, o.eventSubscribers());
      this.set({ socket: 'bridge' }, bridges);
    },
  });
  const transactions = new Histogram({
    name: 'countersign_store_transaction_seconds',
    help: 'Write transactions of this daemon, from the call to the commit (waiting for the write lock or a connection included)',
    labelNames: ['store', 'outcome'] as const,
    buckets: TRANSACTION_BUCKETS,
    registers,
  });

  return {
    contentType: registry.contentType,

    /** The exposition text: this daemon's metrics, then the process's. */
    async render(): Promise<string> {
      const [own, proc] = await Promise.all([registry.metrics(), processMetrics().metrics()]);
      return `${own}\n${proc}`;
    },

    /** Counts a committed request event (RequestEvents listener). */
    requestEvent(e: RequestEvent): void {
      if (e.remote) return;
      const r = e.request;
      if (e.type === 'request.created') {
        created.inc({ format: e.format, kind: r.kind });
        return;
      }
      const decider = deciderOf(r);
      ended.inc({ status: r.status, decider });
      const at = r.decision?.decided_at;
      if (typeof at === 'number') decisionTime.observe({ decider }, Math.max(0, at - r.created_at) / 1000);
    },

    transaction(seconds: number, outcome: TransactionOutcome): void {
      transactions.observe({ store: o.store, outcome }, seconds);
    },

    callbackAttempt(a: CallbackAttempt): void {
      attempts.inc({ target: a.target, result: a.result });
      if (a.gaveUp !== null) failures.inc({ target: a.target, reason: a.gaveUp });
    },

    /** Counts a bridge socket while it is open. */
    bridgeOpened(socket: { once(event: 'close', listener: () => void): unknown }): void {
      bridges++;
      socket.once('close', () => bridges--);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

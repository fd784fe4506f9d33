import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { request } from 'undici';
import type { Clock, TimerHandle } from '../lib/clock.js';
import type { Config } from '../config.js';
import { durationMs } from '../lib/durations.js';
import type { RequestEvents } from '../requests/request-events.js';
import type { HookConfig } from '../notify/hook-config.js';
import type { HookSender } from '../notify/hook-sender.js';
import type { NotifyEvents } from '../notify/notify-events.js';
import type { LeasedDelivery } from '../storage/delivery-outbox.js';
import type { Store, WriteTx } from '../storage/store.js';
import { checkCallbackUrl } from './callback-url-policy.js';
import { classifyError, SHUTDOWN, TIMEOUT } from './attempt-errors.js';
import { classifyStatus, planRetry, type AttemptOutcome, type FailReason } from './retry-policy.js';
import { createSafeDispatcher, type Dial, type Resolver } from './safe-dispatcher.js';
import { roomFor } from './delivery-slots.js';
import { standardWebhooksKey, webhookHeaders } from './webhook-signature.js';

/** What tests (and embedders) may replace: the network beyond this machine and randomness. */
export interface CallbackDispatcherOverrides {
  resolve?: Resolver;
  dial?: Dial;
  /** Jitter source in [0, 1). */
  random?: () => number;
  /** Monotonic ms, for attempt latency only. */
  monotonic?: () => number;
}

/** One delivery attempt, as recorded (for metrics). */
export interface CallbackAttempt {
  target: 'callback' | 'hook';
  /** `failed` whether or not it is retried. */
  result: 'delivered' | 'failed' | 'interrupted';
  /** Why the delivery was given up with this attempt, if it was. */
  gaveUp: FailReason | null;
}

export interface CallbackDispatcherDeps extends CallbackDispatcherOverrides {
  store: Store;
  /** This daemon's id: the holder named on its leases. */
  node: string;
  /**
   * The daemons alive now (this one included): leases held by any other are taken back. Null
   * while that cannot be told (after the store was unreachable): only leases past their time are.
   */
  liveNodes: () => Promise<string[] | null>;
  /** How often to look for leases a vanished daemon left behind. */
  takeoverCheckMs: number;
  events: RequestEvents;
  clock: Clock;
  config: Readonly<Config['callbacks']>;
  log: Logger;
  userAgent: string;
  /** Told of each attempt once it is recorded (metrics). */
  onAttempt?: (attempt: CallbackAttempt) => void;
  /** Hook deliveries: the hooks by name, read at each attempt, and the queue signal. */
  hooks?: {
    get(name: string): HookConfig | undefined;
    all(): readonly HookConfig[];
    events: NotifyEvents;
    sender: HookSender;
  };
}

// How long a lease may outlive the attempt deadline before it counts as abandoned.
const LEASE_MARGIN_MS = 60_000;
// On shutdown, attempts in flight get this long to finish before they are cut and released.
const SHUTDOWN_GRACE_MS = 2_000;
// setTimeout stores its delay in an int32; longer waits are reached in hops.
const MAX_TIMER_MS = 2_147_483_647;
const RESPONSE_DRAIN_LIMIT = 64 * 1024;
const ACTOR = 'callbacks';

/**
 * The callback worker (docs/callbacks.md), one per daemon. It leases due outbox rows, POSTs each
 * body through the SSRF-safe dispatcher, records every attempt and reschedules or finishes the
 * row, all in the store, so a restart resumes exactly where the last process stopped and several
 * daemons never make one attempt twice. It is woken after commit by terminal events for requests
 * with a callback_url (other daemons' included), and otherwise sleeps on one timer armed for the
 * earliest `next_attempt_at`; every `takeoverCheckMs` it takes back leases whose holder is gone.
 */
export function createCallbackDispatcher(deps: CallbackDispatcherDeps) {
  const { store, node, events, clock, config, log, userAgent } = deps;
  const random = deps.random ?? Math.random;
  const monotonic = deps.monotonic ?? (() => performance.now());
  const schedule = config.retry_schedule.map(durationMs);
  const maxAgeMs = durationMs(config.max_age);
  const timeoutMs = durationMs(config.timeout);
  if (config.secret && standardWebhooksKey(config.secret).length === 0) {
    throw new Error('callbacks.secret: a whsec_ secret must carry base64 key bytes after the prefix');
  }
  const agent = createSafeDispatcher({
    allowlist: config.allowlist,
    timeoutMs,
    ...(deps.resolve ? { resolve: deps.resolve } : {}),
    ...(deps.dial ? { dial: deps.dial } : {}),
  });
  // A lease outlives the longest attempt any row can make.
  const longestAttemptMs = Math.max(timeoutMs, ...(deps.hooks?.all() ?? []).map((h) => deps.hooks!.sender.timeoutOf(h)));

  let stopped = true;
  let closed = false;
  let timer: TimerHandle | null = null;
  let wakeQueued = false;
  let pumping = false;
  let pumpAgain = false;
  let takeoverTimer: ReturnType<typeof setInterval> | null = null;
  let unsubscribe: (() => void) | null = null;
  // Each attempt in flight, with its row's hook (null: a callback): what roomFor shares slots by.
  const inFlight = new Map<string, { hook: string | null; controller: AbortController; done: Promise<void> }>();
  const room = () => roomFor([...inFlight.values()].map((f) => f.hook));

  function clearTimer() {
    if (timer) clock.clearTimer(timer);
    timer = null;
  }

  function arm(delay: number) {
    clearTimer();
    timer = clock.setTimer(
      () => {
        timer = null;
        pump();
      },
      Math.min(Math.max(0, delay), MAX_TIMER_MS),
    );
  }

  /**
   * Starts every due delivery there is room for (delivery-slots.ts), then sleeps until the next
   * one it has room for is due. Rows it has no room for wait for an attempt to end: each one that
   * ends pumps again.
   */
  function pump(): void {
    if (stopped) return;
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    clearTimer();
    void (async () => {
      try {
        do {
          pumpAgain = false;
          while (!stopped) {
            const filter = room();
            if (!filter) break;
            const now = clock.now();
            const leased = await store.write((tx) => tx.deliveries.leaseDue(now, now + longestAttemptMs + LEASE_MARGIN_MS, node, filter));
            if (!leased) break;
            run(leased);
          }
        } while (pumpAgain && !stopped);
        // A full worker is re-pumped as each attempt ends; otherwise wait for the next due row it
        // has room for (one it has no room for would wake it at once, over and over).
        const filter = stopped ? null : room();
        if (filter) {
          const next = await store.deliveries.nextDue(filter);
          if (next !== null) arm(next - clock.now());
        }
      } catch (err) {
        log.error({ err }, 'callback worker failed to read the outbox; retrying in 1s');
        if (!stopped) arm(1000);
      } finally {
        pumping = false;
        // A wake-up that came while the next due time was being read (a round trip on
        // PostgreSQL) found the worker busy: take it now, or its row waits for the timer.
        if (pumpAgain && !stopped) pump();
      }
    })();
  }

  /** Takes back leases of daemons that are gone (a crash, a kill -9), then delivers what is due. */
  async function takeOver() {
    const live = await deps.liveNodes();
    const alive = live === null ? null : live.includes(node) ? live : [...live, node];
    const reclaimed = await store.write((tx) => tx.deliveries.reclaimAbandoned(clock.now(), alive));
    if (reclaimed) log.info({ count: reclaimed }, 'resuming callback deliveries a stopped daemon left unfinished');
    return reclaimed;
  }

  function wake() {
    if (wakeQueued || stopped) return;
    wakeQueued = true;
    // After the current turn: the transaction has committed and the HTTP reply goes out first.
    setImmediate(() => {
      wakeQueued = false;
      pump();
    });
  }

  function run(leased: LeasedDelivery) {
    const controller = new AbortController();
    const done = attempt(leased, controller)
      .then(({ outcome, latencyMs }) => finalize(leased, outcome, latencyMs))
      .catch((err: unknown) => log.error({ err, delivery_id: leased.id }, 'callback attempt could not be recorded'))
      .finally(() => {
        inFlight.delete(leased.id);
        pump();
      });
    inFlight.set(leased.id, { hook: leased.hook, controller, done });
  }

  async function attempt(leased: LeasedDelivery, controller: AbortController): Promise<{ outcome: AttemptOutcome; latencyMs: number }> {
    const started = monotonic();
    const elapsed = () => monotonic() - started;
    const now = clock.now();
    if (now > leased.createdAt + maxAgeMs) {
      return {
        outcome: { kind: 'fail', status: null, errorClass: 'max_age', error: 'not sent: older than callbacks.max_age', reason: 'max_age' },
        latencyMs: 0,
      };
    }
    if (leased.hook !== null) return hookAttempt(leased, leased.hook, controller);
    try {
      // The allowlist may have changed since the request was created.
      checkCallbackUrl(leased.url, config.allowlist);
    } catch (err) {
      return {
        outcome: { kind: 'fail', status: null, errorClass: 'url_not_allowed', error: `not sent: ${(err as Error).message}`, reason: 'url_not_allowed' },
        latencyMs: 0,
      };
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': userAgent,
      ...webhookHeaders({ secret: config.secret, id: leased.id, timestampSec: Math.floor(now / 1000), body: leased.body }),
    };
    const deadline = clock.setTimer(() => controller.abort(TIMEOUT), timeoutMs);
    try {
      const res = await request(leased.url, { method: 'POST', headers, body: leased.body, dispatcher: agent, signal: controller.signal });
      const latencyMs = elapsed();
      const retryAfter = res.headers['retry-after'];
      const outcome = classifyStatus(res.statusCode, Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, clock.now());
      // The receiver's body is never read or stored; drain a little so the socket can be reused.
      await res.body.dump({ limit: RESPONSE_DRAIN_LIMIT }).catch(() => undefined);
      return { outcome, latencyMs };
    } catch (err) {
      return { outcome: classifyError(err, controller.signal), latencyMs: elapsed() };
    } finally {
      clock.clearTimer(deadline);
    }
  }

  /** One attempt of a hook delivery (the hook is read from the config now: a removed hook fails the row). */
  async function hookAttempt(leased: LeasedDelivery, name: string, controller: AbortController): Promise<{ outcome: AttemptOutcome; latencyMs: number }> {
    const hook = deps.hooks?.get(name);
    if (!hook) {
      return {
        outcome: { kind: 'fail', status: null, errorClass: 'hook_removed', error: `not sent: hook "${name}" is no longer configured`, reason: 'hook_removed' },
        latencyMs: 0,
      };
    }
    return deps.hooks!.sender.send(hook, { id: leased.id, type: leased.type, requestId: leased.requestId, body: leased.body }, controller);
  }

  /** Tells every daemon on the store that a row is pending again, so whichever is running arms its timer for it. */
  function queued(tx: WriteTx) {
    tx.announce({ type: 'deliveries.queued' });
  }

  /**
   * Records how the attempt ended. Not a durable write (store.ts): losing it in a power failure
   * is the daemon stopping before it, which the lease already covers (the row is taken back, the
   * attempt marked interrupted and made again with the same webhook-id), so it skips a sync of
   * its own and holds no decision's commit behind one. The lease, written before the attempt,
   * stays durable: every attempt made is on record.
   */
  function finalize(leased: LeasedDelivery, outcome: AttemptOutcome, latencyMs: number): Promise<void> {
    const { id, requestId, type, attempt: n } = leased;
    const recordEnd = async (tx: WriteTx) => {
      const { deliveries } = tx;
      const now = clock.now();
      // Hook deliveries are listed per hook (GET /v1/hooks/{name}/deliveries), not in the request's audit trail.
      const hook = leased.hook;
      const target = hook === null ? 'callback' : 'hook';
      const counted = (result: CallbackAttempt['result'], gaveUp: FailReason | null = null) =>
        tx.afterCommit(() => deps.onAttempt?.({ target, result, gaveUp }));
      const fail = async (reason: FailReason, status: number | null, error: string) => {
        if (!(await deliveries.finish(id, 'failed', now, error, node))) return counted('failed');
        counted('failed', reason);
        // A callback's failure is logged from its audit row (observe/lifecycle-log.ts); a hook's has none.
        if (hook === null)
          await tx.requests.appendAudit(requestId, 'callback.failed', ACTOR, now, { delivery_id: id, type, attempts: n, reason, status, error });
        else tx.afterCommit(() => log.warn({ delivery_id: id, request_id: requestId, reason, status, hook }, 'hook delivery failed'));
      };
      // An attempt whose lease was taken over (marked interrupted, maybe leased again) changes
      // nothing, its attempt row included; the attempt was still made, and is counted.
      const lost = async (end: Parameters<typeof deliveries.endAttempt>[2], result: CallbackAttempt['result']) => {
        if (await deliveries.endAttempt(id, n, end, node)) return false;
        counted(result);
        return true;
      };
      switch (outcome.kind) {
        case 'delivered':
          if (await lost({ status: outcome.status, latencyMs, errorClass: null, error: null }, 'delivered')) return;
          counted('delivered');
          if ((await deliveries.finish(id, 'delivered', now, null, node)) && hook === null) {
            await tx.requests.appendAudit(requestId, 'callback.delivered', ACTOR, now, { delivery_id: id, type, attempts: n, status: outcome.status });
          }
          return;
        case 'interrupted':
          if (await lost({ status: null, latencyMs: null, errorClass: 'interrupted', error: outcome.error }, 'interrupted')) return;
          counted('interrupted');
          // Not counted against the schedule and due again at once (on the next start, or another
          // daemon, which hears of it: it had no timer for a row that was leased when it last looked).
          if (await deliveries.release(id, now, null, node)) queued(tx);
          return;
        case 'fail':
          if (await lost({ status: outcome.status, latencyMs, errorClass: outcome.errorClass, error: outcome.error }, 'failed')) return;
          await fail(outcome.reason, outcome.status, outcome.error);
          return;
        case 'retry': {
          if (await lost({ status: outcome.status, latencyMs, errorClass: outcome.errorClass, error: outcome.error }, 'failed')) return;
          const plan = planRetry({
            counted: await deliveries.countedAttempts(id),
            schedule,
            random,
            now,
            createdAt: leased.createdAt,
            maxAgeMs,
            retryAfterMs: outcome.retryAfterMs,
          });
          if ('at' in plan) {
            counted('failed');
            if (await deliveries.release(id, plan.at, outcome.error, node)) queued(tx);
          } else await fail(plan.giveUp, outcome.status, outcome.error);
          return;
        }
      }
    };
    return store.write(recordEnd, { durable: false });
  }

  return {
    /** Reclaims leases a stopped daemon left behind, subscribes to terminal events, delivers what is due. */
    async start(): Promise<void> {
      if (!stopped) return;
      // stop() closes the HTTP agent for good: a stopped worker is replaced, not restarted.
      if (closed) throw new Error('a stopped callback dispatcher cannot be started again');
      stopped = false;
      await takeOver();
      const offRequests = events.on((e) => {
        if (e.type !== 'request.created' && e.request.callback_url) wake();
      });
      // Hook rows queued here (after commit) or on another daemon (through the store).
      const offHooks = deps.hooks?.events.on((e) => {
        if (e.type === 'deliveries.queued') wake();
      });
      unsubscribe = () => {
        offRequests();
        offHooks?.();
      };
      takeoverTimer = setInterval(() => {
        takeOver()
          .then((n) => n > 0 && pump())
          .catch((err: unknown) => log.warn({ err }, 'checking for abandoned callback leases failed'));
      }, deps.takeoverCheckMs);
      takeoverTimer.unref();
      pump();
    },

    /**
     * Stops leasing; attempts in flight get a short grace, then are cut and their rows released
     * (due again at the next start). Nothing queued is lost: pending rows simply wait in SQLite.
     */
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      closed = true;
      unsubscribe?.();
      unsubscribe = null;
      if (takeoverTimer) clearInterval(takeoverTimer);
      clearTimer();
      if (inFlight.size) {
        const grace = clock.setTimer(() => {
          for (const f of inFlight.values()) f.controller.abort(SHUTDOWN);
        }, SHUTDOWN_GRACE_MS);
        await Promise.all([...inFlight.values()].map((f) => f.done));
        clock.clearTimer(grace);
      }
      await agent.destroy();
    },

    /** The number of attempts in flight (for tests and diagnostics). */
    inFlight: () => inFlight.size,
  };
}

export type CallbackDispatcher = ReturnType<typeof createCallbackDispatcher>;

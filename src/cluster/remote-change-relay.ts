import type { Logger } from 'pino';
import type { NotifyEvents } from '../notify/notify-events.js';
import type { RequestEvents, RequestEventType } from '../requests/request-events.js';
import type { AutoView, PolicyEvents } from '../rules/policy-events.js';
import type { StoredRequest } from '../storage/request-records.js';
import { CHANGES_LOST, type Change, type Store } from '../storage/store.js';

const REQUEST_EVENTS = new Set<string>(['request.created', 'request.decided', 'request.expired', 'request.cancelled']);
/** Changes whose event carries the request's record. */
const WITH_RECORD = new Set<string>([...REQUEST_EVENTS, 'request.reminder', 'request.expiring']);
/** The topics whose handling below re-reads what it stands for: replayed, all of them, on a resync. */
const TOPICS = ['rules.changed', 'auto.changed', 'sessions.ended', 'mutes.changed', 'deliveries.queued', 'notices.scheduled'];
/**
 * How long before the last complete read of the change log a resync looks for ended requests:
 * a transaction commits some time after its request's resolved_at, and daemons' clocks differ.
 */
const RESYNC_ALLOWANCE_MS = 60_000;
const RESYNC_PAGE = 200;
const RESYNC_RETRY_MS = 5_000;

type Records = Map<string, Pick<StoredRequest, 'record' | 'format'>>;

function endEvent(status: string): RequestEventType {
  if (status === 'expired') return 'request.expired';
  if (status === 'cancelled') return 'request.cancelled';
  return 'request.decided';
}

/**
 * Turns other daemons' committed changes into this daemon's events, so long-polls, `/v1/events`
 * subscribers, bridge sockets and the workers here hear of them as if they happened here
 * (`remote: true`). Changes are handled in the order the store hands them over; the changes that
 * arrive together (one read of the change log) have their records read together, in one query,
 * as they are when read.
 *
 * `changes.lost` (the change log was pruned past changes this daemon had not read) resyncs: every
 * topic is handled as if it had changed, the requests that ended since shortly before the log
 * was last read whole are announced (again, for some), and so are those among the ones someone
 * here waits on that have ended; a resync that cannot read them is tried again. Requests created
 * meanwhile are not announced.
 */
export function relayRemoteChanges({
  store,
  events,
  notify,
  log,
  policy,
  sessions,
  waiters,
  resyncRetryMs = RESYNC_RETRY_MS,
}: {
  store: Store;
  events: RequestEvents;
  notify?: NotifyEvents;
  log: Logger;
  /** Policy changes: `rules.changed` as is, `auto.changed` with the mode now in force. */
  policy?: { events: PolicyEvents; auto: () => Promise<AutoView> };
  /** `sessions.ended`: a web session was signed out elsewhere (which one is not said). */
  sessions?: { ended: () => void };
  /** Long-polls here: the requests they wait on are read again on a resync. */
  waiters?: { held: () => string[] };
  /** How long after a resync that could not read the requests it tries again (tests shorten it). */
  resyncRetryMs?: number;
}): () => void {
  let queued: Change[] = [];
  let draining: Promise<void> | null = null;
  let stopped = false;
  let retry: ReturnType<typeof setTimeout> | null = null;

  function push(change: Change) {
    queued.push(change);
    // Started after the current turn, so every change the store hands over in it is one batch.
    draining ??= Promise.resolve().then(drain);
  }

  const handle = async (change: Change, records: Records): Promise<void> => {
    if (change.type === CHANGES_LOST) return resync(change.since);
    if (policy && change.type === 'rules.changed') return policy.events.emit({ type: 'rules.changed', remote: true });
    if (policy && change.type === 'auto.changed') return policy.events.emit({ type: 'auto.changed', auto: await policy.auto(), remote: true });
    if (sessions && change.type === 'sessions.ended') return sessions.ended();
    const stored = change.requestId ? records.get(change.requestId) : undefined;
    if (notify && relayNotifyChange(notify, change, stored)) return;
    if (!REQUEST_EVENTS.has(change.type) || !stored) return;
    events.emit({ type: change.type as RequestEventType, request: stored.record, format: stored.format, remote: true });
  };

  async function resync(since: number | undefined) {
    for (const type of TOPICS) {
      await handle({ type }, new Map()).catch((err: unknown) => log.warn({ err: (err as Error).message, type }, 'cannot refresh after lost changes'));
    }
    const announced = new Set<string>();
    const announce = (s: Pick<StoredRequest, 'record' | 'format'>) => {
      announced.add(s.record.id);
      events.emit({ type: endEvent(s.record.status), request: s.record, format: s.format, remote: true });
    };
    try {
      if (since !== undefined) {
        const from = since - RESYNC_ALLOWANCE_MS;
        // Newest resolution first, page by page, until one older than `from`.
        let before: { resolvedAt: number; id: string } | undefined;
        for (;;) {
          const page = await store.requests.history({ limit: RESYNC_PAGE, before });
          for (const s of page) if (s.resolvedAt !== null && s.resolvedAt >= from) announce(s);
          const last = page.at(-1);
          if (page.length < RESYNC_PAGE || last?.resolvedAt == null || last.resolvedAt < from) break;
          before = { resolvedAt: last.resolvedAt, id: last.record.id };
        }
      }
      // A waiter's request may have ended before the window (a commit slower than the allowance).
      const held = (waiters?.held() ?? []).filter((id) => !announced.has(id));
      for (let i = 0; i < held.length; i += RESYNC_PAGE) {
        for (const s of await store.requests.records(held.slice(i, i + RESYNC_PAGE))) if (s.record.status !== 'pending') announce(s);
      }
      log.warn(
        { since: since ?? null, announced: announced.size },
        'changes made by other daemons were pruned from the change log before this daemon read them; resynced',
      );
    } catch (err) {
      log.warn(
        { err: (err as Error).message, since: since ?? null, announced: announced.size },
        'changes made by other daemons were pruned from the change log before this daemon read them; the resync could not read the requests that ended; trying again shortly',
      );
      // The whole resync again: what it announced twice, listeners take as they take any replay.
      if (!stopped && !retry) {
        retry = setTimeout(() => {
          retry = null;
          if (!stopped) push({ type: CHANGES_LOST, since });
        }, resyncRetryMs);
        retry.unref();
      }
    }
  }

  async function drain() {
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      const ids = [...new Set(batch.flatMap((c) => (WITH_RECORD.has(c.type) && c.requestId ? [c.requestId] : [])))];
      let records: Records = new Map();
      try {
        records = new Map((await store.requests.records(ids)).map((s) => [s.record.id, s]));
      } catch (err) {
        // Only the request events go unheard; sign-outs, queued deliveries and policy changes need no record.
        log.warn({ err: (err as Error).message, requests: ids.length }, 'cannot read the requests of changes from another daemon');
      }
      for (const change of batch) {
        await handle(change, records).catch((err: unknown) => log.warn({ err: (err as Error).message, change }, 'cannot relay a change from another daemon'));
      }
    }
    draining = null;
  }

  const unsubscribe = store.onRemoteChange(push);
  return () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    unsubscribe();
  };
}

/** Notification topics: mutes, queued deliveries and notices, reminders and expiring notices. */
function relayNotifyChange(notify: NotifyEvents, change: Change, stored: Pick<StoredRequest, 'record' | 'format'> | undefined): boolean {
  switch (change.type) {
    case 'mutes.changed':
    case 'deliveries.queued':
      notify.emit({ type: change.type });
      return true;
    case 'notices.scheduled':
      notify.emit({ type: 'notices.scheduled', at: null });
      return true;
    case 'request.reminder':
    case 'request.expiring':
      if (stored) notify.emit({ type: change.type, request: stored.record, format: stored.format });
      return true;
    default:
      return false;
  }
}

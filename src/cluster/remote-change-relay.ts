import type { Logger } from 'pino';
import type { NotifyEvents } from '../notify/notify-events.js';
import type { RequestEvents, RequestEventType } from '../requests/request-events.js';
import type { AutoView, PolicyEvents } from '../rules/policy-events.js';
import type { StoredRequest } from '../storage/request-records.js';
import type { Change, Store } from '../storage/store.js';

const REQUEST_EVENTS = new Set<string>(['request.created', 'request.decided', 'request.expired', 'request.cancelled']);
/** Changes whose event carries the request's record. */
const WITH_RECORD = new Set<string>([...REQUEST_EVENTS, 'request.reminder', 'request.expiring']);

type Records = Map<string, Pick<StoredRequest, 'record' | 'format'>>;

/**
 * Turns other daemons' committed changes into this daemon's events, so long-polls, `/v1/events`
 * subscribers, bridge sockets and the workers here hear of them as if they happened here
 * (`remote: true`). Changes are handled in the order the store hands them over; the changes that
 * arrive together (one read of the change log) have their records read together, in one query,
 * as they are when read.
 */
export function relayRemoteChanges({
  store,
  events,
  notify,
  log,
  policy,
  sessions,
}: {
  store: Store;
  events: RequestEvents;
  notify?: NotifyEvents;
  log: Logger;
  /** Policy changes: `rules.changed` as is, `auto.changed` with the mode now in force. */
  policy?: { events: PolicyEvents; auto: () => Promise<AutoView> };
  /** `sessions.ended`: a web session was signed out elsewhere (which one is not said). */
  sessions?: { ended: () => void };
}): () => void {
  let queued: Change[] = [];
  let draining: Promise<void> | null = null;

  const handle = async (change: Change, records: Records) => {
    if (policy && change.type === 'rules.changed') return policy.events.emit({ type: 'rules.changed', remote: true });
    if (policy && change.type === 'auto.changed') return policy.events.emit({ type: 'auto.changed', auto: await policy.auto(), remote: true });
    if (sessions && change.type === 'sessions.ended') return sessions.ended();
    const stored = change.requestId ? records.get(change.requestId) : undefined;
    if (notify && relayNotifyChange(notify, change, stored)) return;
    if (!REQUEST_EVENTS.has(change.type) || !stored) return;
    events.emit({ type: change.type as RequestEventType, request: stored.record, format: stored.format, remote: true });
  };

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

  return store.onRemoteChange((change) => {
    queued.push(change);
    // Started after the current turn, so every change the store hands over in it is one batch.
    draining ??= Promise.resolve().then(drain);
  });
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

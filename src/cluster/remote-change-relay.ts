import type { Logger } from 'pino';
import type { NotifyEvents } from '../notify/notify-events.js';
import type { RequestEvents, RequestEventType } from '../requests/request-events.js';
import type { AutoView, PolicyEvents } from '../rules/policy-events.js';
import type { Change, Store } from '../storage/store.js';

const REQUEST_EVENTS = new Set<string>(['request.created', 'request.decided', 'request.expired', 'request.cancelled']);

/**
 * Turns other daemons' committed changes into this daemon's events, so long-polls, `/v1/events`
 * subscribers, bridge sockets and the workers here hear of them as if they happened here
 * (`remote: true`). Changes are handled one at a time, in the order the store hands them over.
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
  let chain = Promise.resolve();
  const handle = async (change: Change) => {
    if (policy && change.type === 'rules.changed') return policy.events.emit({ type: 'rules.changed', remote: true });
    if (policy && change.type === 'auto.changed') return policy.events.emit({ type: 'auto.changed', auto: await policy.auto(), remote: true });
    if (sessions && change.type === 'sessions.ended') return sessions.ended();
    if (notify && (await relayNotifyChange(store, notify, change))) return;
    if (!REQUEST_EVENTS.has(change.type) || !change.requestId) return;
    const stored = await store.requests.get(change.requestId);
    if (!stored) return;
    events.emit({ type: change.type as RequestEventType, request: stored.record, format: stored.format, remote: true });
  };
  return store.onRemoteChange((change) => {
    chain = chain
      .then(() => handle(change))
      .catch((err: unknown) => log.warn({ err: (err as Error).message, change }, 'cannot relay a change from another daemon'));
  });
}

/** Notification topics: mutes, queued deliveries and notices, reminders and expiring notices. */
async function relayNotifyChange(store: Store, notify: NotifyEvents, change: Change): Promise<boolean> {
  switch (change.type) {
    case 'mutes.changed':
    case 'deliveries.queued':
      notify.emit({ type: change.type });
      return true;
    case 'notices.scheduled':
      notify.emit({ type: 'notices.scheduled', at: null });
      return true;
    case 'request.reminder':
    case 'request.expiring': {
      const stored = change.requestId ? await store.requests.get(change.requestId) : undefined;
      if (stored) notify.emit({ type: change.type, request: stored.record, format: stored.format });
      return true;
    }
    default:
      return false;
  }
}

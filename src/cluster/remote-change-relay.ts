import type { Logger } from 'pino';
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
  log,
  policy,
}: {
  store: Store;
  events: RequestEvents;
  log: Logger;
  /** Policy changes: `rules.changed` as is, `auto.changed` with the mode now in force. */
  policy?: { events: PolicyEvents; auto: () => Promise<AutoView> };
}): () => void {
  let chain = Promise.resolve();
  const handle = async (change: Change) => {
    if (policy && change.type === 'rules.changed') return policy.events.emit({ type: 'rules.changed', remote: true });
    if (policy && change.type === 'auto.changed') return policy.events.emit({ type: 'auto.changed', auto: await policy.auto(), remote: true });
    if (!REQUEST_EVENTS.has(change.type) || !change.requestId) return;
    const stored = await store.requests.get(change.requestId);
    if (!stored) return;
    events.emit({ type: change.type as RequestEventType, request: stored.record, format: stored.format, remote: true });
  };
  return store.onRemoteChange((change) => {
    chain = chain.then(() => handle(change)).catch((err: unknown) => log.warn({ err: (err as Error).message, change }, 'cannot relay a change from another daemon'));
  });
}

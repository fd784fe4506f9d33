import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { relayRemoteChanges } from '../../src/cluster/remote-change-relay.js';
import { NotifyEvents } from '../../src/notify/notify-events.js';
import { RequestEvents } from '../../src/requests/request-events.js';
import type { Change, Store } from '../../src/storage/store.js';

/**
 * Other daemons' changes become this daemon's events: the records a batch needs are read in one
 * query, and a failed read loses only the request events, never a change that needs no record.
 */
describe('remote change relay', () => {
  function relay(records: (ids: readonly string[]) => Promise<unknown[]>) {
    let deliver: (c: Change) => void = () => {};
    const reads: string[][] = [];
    const store = {
      onRemoteChange: (l: (c: Change) => void) => {
        deliver = l;
        return () => {};
      },
      requests: {
        records: async (ids: readonly string[]) => {
          reads.push([...ids]);
          return records(ids);
        },
      },
    } as unknown as Store;
    const heard: string[] = [];
    const events = new RequestEvents();
    events.on((e) => heard.push(`${e.type} ${e.request.id}`));
    const notify = new NotifyEvents();
    notify.on((e) => heard.push(e.type));
    relayRemoteChanges({ store, events, notify, log: pino({ level: 'silent' }), sessions: { ended: () => heard.push('sessions.ended') } });
    const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
    return { deliver: (c: Change) => deliver(c), reads, heard, settle };
  }

  it('reads the records of the changes handed over together in one query, and emits in order', async () => {
    const r = relay(async (ids) => ids.map((id) => ({ format: 'handup', record: { id } })));
    r.deliver({ type: 'request.created', requestId: 'a' });
    r.deliver({ type: 'sessions.ended' });
    r.deliver({ type: 'request.decided', requestId: 'b' });
    r.deliver({ type: 'request.decided', requestId: 'a' });
    await r.settle();
    expect(r.reads).toEqual([['a', 'b']]);
    expect(r.heard).toEqual(['request.created a', 'sessions.ended', 'request.decided b', 'request.decided a']);
  });

  it('a failed read loses only the request events: sign-outs and queued deliveries still go through', async () => {
    const r = relay(async () => {
      throw new Error('the database is unavailable');
    });
    r.deliver({ type: 'request.decided', requestId: 'a' });
    r.deliver({ type: 'sessions.ended' });
    r.deliver({ type: 'deliveries.queued' });
    await r.settle();
    expect(r.heard).toEqual(['sessions.ended', 'deliveries.queued']);
  });
});

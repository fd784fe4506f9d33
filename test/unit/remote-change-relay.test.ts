import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { relayRemoteChanges } from '../../src/cluster/remote-change-relay.js';
import { NotifyEvents } from '../../src/notify/notify-events.js';
import { RequestEvents } from '../../src/requests/request-events.js';
import { PolicyEvents } from '../../src/rules/policy-events.js';
import type { HistoryFilters } from '../../src/storage/request-records.js';
import type { Change, Store } from '../../src/storage/store.js';

/**
 * Other daemons' changes become this daemon's events: the records a batch needs are read in one
 * query, and a failed read loses only the request events, never a change that needs no record.
 */
/** A store whose other daemons' changes the test hands over (`deliver`), with these request reads. */
function changingStore(requests: Record<string, unknown>) {
  let deliver: (c: Change) => void = () => {};
  const store = {
    onRemoteChange: (l: (c: Change) => void) => {
      deliver = l;
      return () => {};
    },
    requests,
  } as unknown as Store;
  return { store, deliver: (c: Change) => deliver(c) };
}

describe('remote change relay', () => {
  function relay(records: (ids: readonly string[]) => Promise<unknown[]>) {
    const reads: string[][] = [];
    const { store, deliver } = changingStore({
      records: async (ids: readonly string[]) => {
        reads.push([...ids]);
        return records(ids);
      },
    });
    const heard: string[] = [];
    const events = new RequestEvents();
    events.on((e) => heard.push(`${e.type} ${e.request.id}`));
    const notify = new NotifyEvents();
    notify.on((e) => heard.push(e.type));
    relayRemoteChanges({ store, events, notify, log: pino({ level: 'silent' }), sessions: { ended: () => heard.push('sessions.ended') } });
    const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
    return { deliver, reads, heard, settle };
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

  describe('changes.lost', () => {
    const MINUTE = 60_000;
    const since = 100 * MINUTE;
    type Row = { format: string; record: { id: string; status: string }; resolvedAt: number | null };
    // 450 requests ended a second apart, the newest at `since`: 60 of them within the minute
    // before it, the rest older; plus one that ended long ago and one still pending.
    const ended: Row[] = Array.from({ length: 450 }, (_, i) => ({
      format: 'handup',
      record: { id: `r${String(i).padStart(3, '0')}`, status: ['approved', 'expired', 'cancelled', 'denied'][i % 4]! },
      resolvedAt: since - (449 - i) * 1000,
    }));
    const old: Row = { format: 'handup', record: { id: 'old', status: 'approved' }, resolvedAt: since - 60 * MINUTE };
    const pending: Row = { format: 'handup', record: { id: 'waiting', status: 'pending' }, resolvedAt: null };

    function resyncing(held: string[]) {
      const pages: Array<HistoryFilters['before']> = [];
      const reads: string[][] = [];
      const byNewest = [...ended].sort((a, b) => b.resolvedAt! - a.resolvedAt! || (a.record.id < b.record.id ? 1 : -1));
      const { store, deliver } = changingStore({
        records: async (ids: readonly string[]) => {
          reads.push([...ids]);
          return [...ended, old, pending].filter((r) => ids.includes(r.record.id));
        },
        history: async (f: HistoryFilters) => {
          pages.push(f.before);
          const after = f.before
            ? byNewest.filter((r) => r.resolvedAt! < f.before!.resolvedAt || (r.resolvedAt === f.before!.resolvedAt && r.record.id < f.before!.id))
            : byNewest;
          return [...after, old].slice(0, f.limit);
        },
      });
      const heard: string[] = [];
      const events = new RequestEvents();
      events.on((e) => heard.push(`${e.type} ${e.request.id}${e.remote ? '' : ' (local?)'}`));
      const notify = new NotifyEvents();
      notify.on((e) => heard.push(e.type));
      const policyEvents = new PolicyEvents();
      policyEvents.on((e) => heard.push(`${e.type}${e.type === 'auto.changed' ? ` ${e.auto.mode}` : ''}`));
      const lines: Array<{ level: number; msg: string; since?: number; announced?: number }> = [];
      const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
      relayRemoteChanges({
        store,
        events,
        notify,
        log,
        policy: { events: policyEvents, auto: async () => ({ mode: 'low', until: null, set_at: 1, set_by: 'x' }) },
        sessions: { ended: () => heard.push('sessions.ended') },
        waiters: { held: () => held },
      });
      return { deliver, heard, pages, reads, lines };
    }

    it('refreshes every topic, announces the requests that ended since a minute before the last complete read, page by page, and rechecks the waiters', async () => {
      const r = resyncing(['r449', 'old', 'waiting']);
      r.deliver({ type: 'changes.lost', since });
      await expect.poll(() => r.lines.length).toBe(1);
      expect(r.heard.slice(0, 6)).toEqual(['rules.changed', 'auto.changed low', 'sessions.ended', 'mutes.changed', 'deliveries.queued', 'notices.scheduled']);
      const announced = r.heard.slice(6);
      // The 61 within the minute (its ends included), newest first, each with the event of its end;
      // then the waiter's request that ended long before; nothing for the one still pending.
      expect(announced).toHaveLength(62);
      expect(announced.slice(0, 4)).toEqual(['request.expired r449', 'request.decided r448', 'request.decided r447', 'request.cancelled r446']);
      expect(announced[60]).toBe('request.expired r389');
      expect(announced[61]).toBe('request.decided old');
      // One page of 200 covered the minute: no read further back than needed.
      expect(r.pages).toEqual([undefined]);
      expect(r.reads.filter((ids) => ids.length > 0)).toEqual([['old', 'waiting']]);
      expect(r.lines[0]).toMatchObject({ level: 40, since, announced: 62 });
      expect(r.lines[0]!.msg).toMatch(/pruned from the change log before this daemon read them; resynced/);
    });

    it('reads history in pages of 200 until a request that ended before the window', async () => {
      const r = resyncing([]);
      // The last complete read came when the oldest of the 450 ended: every one is announced.
      r.deliver({ type: 'changes.lost', since: ended[0]!.resolvedAt! });
      await expect.poll(() => r.lines.length).toBe(1);
      expect(r.heard.filter((h) => h.startsWith('request.'))).toHaveLength(450);
      expect(r.pages).toEqual([undefined, { resolvedAt: ended[250]!.resolvedAt, id: 'r250' }, { resolvedAt: ended[50]!.resolvedAt, id: 'r050' }]);
    });

    it('a resync that cannot read the requests that ended is tried again, until it can; none after the relay stops', async () => {
      let failures = 1;
      const { store, deliver } = changingStore({
        records: async () => [],
        history: async () => {
          if (failures-- > 0) throw new Error('the database is unavailable');
          return [ended[449]];
        },
      });
      const heard: string[] = [];
      const events = new RequestEvents();
      events.on((e) => heard.push(`${e.type} ${e.request.id}`));
      const lines: Array<{ msg: string }> = [];
      const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
      const stop = relayRemoteChanges({ store, events, log, resyncRetryMs: 10 });
      deliver({ type: 'changes.lost', since });
      await expect.poll(() => lines.length).toBe(2);
      expect(lines.map((l) => l.msg.split('; ').at(-1))).toEqual(['trying again shortly', 'resynced']);
      expect(heard).toEqual(['request.expired r449']);

      failures = Infinity;
      deliver({ type: 'changes.lost', since });
      await expect.poll(() => lines.length).toBeGreaterThanOrEqual(4);
      stop();
      const tried = lines.length;
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lines).toHaveLength(tried);
    });
  });
});

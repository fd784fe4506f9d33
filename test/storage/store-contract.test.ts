import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { RequestKeyTaken, type StoredRequest } from '../../src/storage/request-records.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Change, Store } from '../../src/storage/store.js';
import { freshPostgresSchema, TEST_POSTGRES_URL, type FreshPostgres } from '../helpers/postgres.js';
import { storedRequest } from '../helpers/stored-request.js';

const silent = pino({ level: 'silent' });

interface Harness {
  open(node?: string): Promise<Store>;
  cleanup(): Promise<void>;
}

const stores: Array<[string, () => Promise<Harness>]> = [
  [
    'sqlite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'countersign-store-'));
      return {
        open: async () => openSqliteStore(join(dir, 'countersign.db'), { synchronous: 'full' }),
        cleanup: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  ],
];
if (TEST_POSTGRES_URL) {
  stores.push([
    'postgres',
    async () => {
      const db: FreshPostgres = await freshPostgresSchema();
      return {
        open: (node = 'node-a') => openPostgresStore({ url: db.url, poolSize: 5, node, log: silent, pollMs: 200 }),
        cleanup: () => db.drop(),
      };
    },
  ]);
}

describe.each(stores)('the %s store', (kind, harness) => {
  let h: Harness;
  let store: Store;
  const opened: Store[] = [];
  beforeEach(async () => {
    h = await harness();
    store = await h.open();
    opened.push(store);
  });
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
    await h.cleanup();
  });

  it('stores a request and reads it back as written, the native frame only on its own', async () => {
    const s = storedRequest({}, { nativeContext: { b: [2] } });
    const bare = storedRequest();
    expect(await store.write((tx) => tx.requests.insert({ ...s, nativeFrame: { a: 1 } }))).toBe(true);
    expect(await store.write((tx) => tx.requests.insert(bare))).toBe(true);
    expect(await store.requests.get(s.record.id)).toEqual(s);
    expect(await store.requests.get('nope')).toBeUndefined();
    expect(await store.requests.nativeFrame(s.record.id)).toEqual({ a: 1 });
    expect(await store.requests.nativeFrame(bare.record.id)).toBeNull();
    expect(await store.requests.nativeFrame('nope')).toBeUndefined();
    const both = await store.requests.records([bare.record.id, 'nope', s.record.id]);
    expect(both.sort((x, y) => (x.record.id === s.record.id ? -1 : y.record.id === s.record.id ? 1 : 0))).toEqual([
      { record: s.record, format: s.format },
      { record: bare.record, format: bare.format },
    ]);
    expect(await store.requests.records([])).toEqual([]);
  });

  it('refuses a second request with a taken native key, and a taken pending dedupe key', async () => {
    const a = storedRequest({}, { format: 'ask', nativeKey: 'ask:s:1' });
    const b = storedRequest({}, { format: 'ask', nativeKey: 'ask:s:1' });
    const c = storedRequest({ dedupe_key: 'k' });
    const d = storedRequest({ dedupe_key: 'k' });
    expect(await store.write((tx) => tx.requests.insert(a))).toBe(true);
    expect(await store.write((tx) => tx.requests.insert(b))).toBe(false);
    expect(await store.write((tx) => tx.requests.insert(c))).toBe(true);
    expect(await store.write((tx) => tx.requests.insert(d))).toBe(false);
    expect(await store.requests.get(b.record.id)).toBeUndefined();
    expect((await store.requests.findByNativeKey('ask', 'admin', 'ask:s:1'))?.record.id).toBe(a.record.id);
  });

  it("frees a submitter's native key: its request keeps it with its id appended, and the key takes a new request", async () => {
    const a = storedRequest({}, { format: 'claude-code', nativeKey: 'cc:h1' });
    const other = storedRequest({}, { format: 'claude-code', nativeKey: 'cc:h1', submitter: 'bot' });
    expect(await store.write((tx) => tx.requests.insert(a))).toBe(true);
    expect(await store.write((tx) => tx.requests.insert(other))).toBe(true);
    expect(await store.write((tx) => tx.requests.releaseNativeKey('claude-code', 'admin', 'cc:h1'))).toBe(true);
    expect(await store.write((tx) => tx.requests.releaseNativeKey('claude-code', 'admin', 'cc:h1'))).toBe(false);
    expect((await store.requests.get(a.record.id))?.nativeKey).toBe(`cc:h1#${a.record.id}`);
    expect(await store.requests.findByNativeKey('claude-code', 'admin', 'cc:h1')).toBeUndefined();
    expect((await store.requests.findByNativeKey('claude-code', 'bot', 'cc:h1'))?.record.id).toBe(other.record.id);
    const b = storedRequest({}, { format: 'claude-code', nativeKey: 'cc:h1' });
    expect(await store.write((tx) => tx.requests.insert(b))).toBe(true);
    expect((await store.requests.findByNativeKey('claude-code', 'admin', 'cc:h1'))?.record.id).toBe(b.record.id);
  });

  it('adds a request whose key is free; a taken key fails the whole write with RequestKeyTaken, whenever it surfaces', async () => {
    const a = storedRequest({}, { format: 'ask', nativeKey: 'ask:s:2' });
    const c = storedRequest({ dedupe_key: 'k2' });
    await store.write(async (tx) => {
      await tx.requests.add({ ...a, nativeFrame: { q: 1 } });
      await tx.requests.add(c);
    });
    expect(await store.requests.get(a.record.id)).toEqual(a);
    expect(await store.requests.get(c.record.id)).toEqual(c);
    expect(await store.requests.nativeFrame(a.record.id)).toEqual({ q: 1 });

    const taken = [storedRequest({}, { format: 'ask', nativeKey: 'ask:s:2' }), storedRequest({ dedupe_key: 'k2' })];
    for (const again of taken) {
      // Alone (the failure may wait for the COMMIT), or followed by a statement that needs an answer.
      for (const after of [false, true]) {
        const audited = storedRequest();
        const write = store.write(async (tx) => {
          await tx.requests.insert(audited);
          await tx.requests.appendAudit(audited.record.id, 'created', 'admin', 1, null);
          await tx.requests.add(again);
          if (after) await tx.requests.get(again.record.id);
        });
        await expect(write).rejects.toBeInstanceOf(RequestKeyTaken);
        expect(await store.requests.get(again.record.id)).toBeUndefined();
        expect(await store.requests.get(audited.record.id)).toBeUndefined();
        expect(await store.requests.audit(audited.record.id)).toEqual([]);
      }
    }
    // Other unique violations are not a taken request key.
    const dup = storedRequest();
    await store.write((tx) => tx.requests.add(dup));
    await expect(store.write((tx) => tx.requests.add(dup))).rejects.not.toBeInstanceOf(RequestKeyTaken);
  });

  it('answers key lookups made together each with the request of its own key, or none', async () => {
    // Two submitters, keys each uses and keys only the other uses, a decided request, and
    // native keys of two formats: every lookup must find exactly its own row.
    const mine = storedRequest({ dedupe_key: 'a' });
    const theirs = storedRequest({ dedupe_key: 'b' }, { submitter: 'bot' });
    const theirsA = storedRequest({ dedupe_key: 'a' }, { submitter: 'bot' });
    const decided = storedRequest({ dedupe_key: 'c', status: 'approved' });
    const ask = storedRequest({}, { format: 'ask', nativeKey: 'n1' });
    const roll = storedRequest({}, { format: 'roll', nativeKey: 'n2', submitter: 'bot' });
    await store.write(async (tx) => {
      for (const s of [mine, theirs, theirsA, decided, ask, roll]) await tx.requests.add(s);
    });
    const id = async (found: Promise<StoredRequest | undefined>) => (await found)?.record.id ?? null;
    const dedupe = (submitter: string, key: string) => id(store.requests.findPendingByDedupe(submitter, key));
    const native = (format: string, submitter: string, key: string) => id(store.requests.findByNativeKey(format, submitter, key));
    const together = await Promise.all([
      dedupe('admin', 'a'),
      dedupe('admin', 'b'),
      dedupe('bot', 'a'),
      dedupe('bot', 'b'),
      dedupe('admin', 'c'),
      dedupe('nobody', 'a'),
      native('ask', 'admin', 'n1'),
      native('roll', 'bot', 'n2'),
      native('ask', 'bot', 'n2'),
      native('roll', 'admin', 'n1'),
      native('roll', 'bot', 'n1'),
    ]);
    expect(together).toEqual([mine.record.id, null, theirsA.record.id, theirs.record.id, null, null, ask.record.id, roll.record.id, null, null, null]);
    // The same, one at a time.
    expect([await dedupe('admin', 'a'), await dedupe('admin', 'b'), await native('ask', 'admin', 'n1'), await native('ask', 'bot', 'n2')]).toEqual([
      mine.record.id,
      null,
      ask.record.id,
      null,
    ]);
  });

  it('holds pending dedupe keys for every request without a native key (handup and mcp alike), never for native ones', async () => {
    const handup = storedRequest({ dedupe_key: 'deploy-1' });
    const mcp = storedRequest({ dedupe_key: 'deploy-1' }, { format: 'mcp' });
    const mcpOther = storedRequest({ dedupe_key: 'deploy-2' }, { format: 'mcp' });
    const mcpAgain = storedRequest({ dedupe_key: 'deploy-2' }, { format: 'mcp' });
    // A native record's dedupe_key is its native key: unique through requests_native_key only.
    const native = storedRequest({ dedupe_key: 'deploy-2' }, { format: 'claude-code', nativeKey: 'claude-code:toolu_1' });
    expect(await store.write((tx) => tx.requests.insert(handup))).toBe(true);
    expect(await store.write((tx) => tx.requests.insert(mcp))).toBe(false);
    expect(await store.write((tx) => tx.requests.insert(mcpOther))).toBe(true);
    expect(await store.write((tx) => tx.requests.insert(mcpAgain))).toBe(false);
    expect(await store.write((tx) => tx.requests.insert(native))).toBe(true);
    expect((await store.write((tx) => tx.requests.findPendingByDedupe('admin', 'deploy-2')))?.record.id).toBe(mcpOther.record.id);
  });

  it('rolls back everything a failed write did, and runs afterCommit only for committed writes', async () => {
    const s = storedRequest();
    const ran: string[] = [];
    await expect(
      store.write(async (tx) => {
        await tx.requests.insert(s);
        tx.afterCommit(() => ran.push('failed'));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await store.requests.get(s.record.id)).toBeUndefined();
    await store.write(async (tx) => {
      await tx.requests.insert(s);
      tx.afterCommit(() => ran.push('ok'));
    });
    expect(ran).toEqual(['ok']);
  });

  it('keeps writes queued together independent: one that throws rolls back alone', async () => {
    const a = storedRequest();
    const b = storedRequest();
    const results = await Promise.allSettled([
      store.write((tx) => tx.requests.insert(a)),
      store.write(async (tx) => {
        await tx.requests.insert(b);
        throw new Error('no');
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect(await store.requests.get(a.record.id)).toBeDefined();
    expect(await store.requests.get(b.record.id)).toBeUndefined();
  });

  it('never shows a read what a write has not committed yet', async () => {
    const s = storedRequest();
    let seenInside: unknown = 'unset';
    await store.write(async (tx) => {
      await tx.requests.insert(s);
      seenInside = await store.requests.get(s.record.id);
    });
    expect(seenInside).toBeUndefined();
    expect(await store.requests.get(s.record.id)).toBeDefined();
  });

  it('finishes a pending request exactly once when writers race', async () => {
    const s = storedRequest();
    await store.write((tx) => tx.requests.insert(s));
    const tries = Array.from({ length: 8 }, (_, i) =>
      store.write((tx) => tx.requests.finish({ ...s.record, status: 'approved', decision: null, title: `winner ${i}` }, 5)),
    );
    const won = (await Promise.all(tries)).filter(Boolean);
    expect(won).toHaveLength(1);
    const after = await store.requests.get(s.record.id);
    expect(after?.record.status).toBe('approved');
    expect(after?.resolvedAt).toBe(5);
  });

  it('counts pending requests only', async () => {
    expect(await store.requests.countPending()).toBe(0);
    const [a, b, c] = [storedRequest(), storedRequest({ dedupe_key: 'x' }, { format: 'roll' }), storedRequest()];
    await store.write(async (tx) => {
      for (const s of [a, b, c]) await tx.requests.insert(s);
    });
    await store.write((tx) => tx.requests.finish({ ...c.record, status: 'denied' }, 5));
    expect(await store.requests.countPending()).toBe(2);
    // Inside a transaction, its own work counts.
    await store.write(async (tx) => {
      await tx.requests.finish({ ...a.record, status: 'cancelled' }, 6);
      expect(await tx.requests.countPending()).toBe(1);
    });
    expect(await store.requests.countPending()).toBe(1);
  });

  it('claims due requests once across concurrent sweeps, oldest deadline first', async () => {
    const due = [3, 1, 2].map((n) => storedRequest({ expires_at: n * 1000 }));
    const later = storedRequest({ expires_at: 99_000 });
    await store.write(async (tx) => {
      for (const s of [...due, later]) await tx.requests.insert(s);
    });
    expect(await store.requests.nextDeadline()).toBe(1000);
    const sweep = () =>
      store.write(async (tx) => {
        const claimed = await tx.requests.claimDue(10_000, 10);
        const out: string[] = [];
        for (const c of claimed) if (await tx.requests.finish({ ...c.record, status: 'expired' }, 10_000)) out.push(c.record.id);
        return out;
      });
    const [a, b] = await Promise.all([sweep(), sweep()]);
    expect([...a, ...b].sort()).toEqual(due.map((d) => d.record.id).sort());
    expect(await store.requests.nextDeadline()).toBe(99_000);
  });

  it('keeps audit rows in order and refuses to change them', async () => {
    const s = storedRequest();
    await store.write(async (tx) => {
      await tx.requests.insert(s);
      await tx.requests.appendAudit(s.record.id, 'created', 'admin', 1);
      await tx.requests.appendAudit(s.record.id, 'decided', 'admin', 2, { option: 'approve' });
    });
    const rows = await store.requests.audit(s.record.id);
    expect(rows.map((r) => [r.event, r.at, r.details])).toEqual([
      ['created', 1, undefined],
      ['decided', 2, { option: 'approve' }],
    ]);
    expect(typeof rows[0]!.id).toBe('number');
  });

  it('stores audit rows as written, whatever characters they carry, and a read in the same write sees them', async () => {
    const s = storedRequest();
    const tricky = `it's a \\ back'slash \\' and ? and $1 and '' and "quotes" and 😀\nnew line`;
    let seen: string[] = [];
    await store.write(async (tx) => {
      await tx.requests.insert(s);
      await tx.requests.appendAudit(s.record.id, 'created', tricky, 1, { note: tricky, n: -1.5e-7, ok: true, none: null });
      seen = (await tx.requests.audit(s.record.id)).map((r) => r.actor);
      await tx.requests.appendAudit(s.record.id, 'decided', 'admin', 2);
    });
    expect(seen).toEqual([tricky]);
    const rows = await store.requests.audit(s.record.id);
    expect(rows.map((r) => [r.event, r.actor, r.at, r.details])).toEqual([
      ['created', tricky, 1, { note: tricky, n: -1.5e-7, ok: true, none: null }],
      ['decided', 'admin', 2, undefined],
    ]);
  });

  it('fails the whole write when an audit row cannot be stored, even as the last statement before COMMIT', async () => {
    const s = storedRequest();
    await expect(
      store.write(async (tx) => {
        await tx.requests.insert(s);
        // The audit table refuses an event of NULL; nothing follows it but the COMMIT.
        await tx.requests.appendAudit(s.record.id, null as unknown as string, 'admin', 1);
      }),
    ).rejects.toThrow();
    expect(await store.requests.get(s.record.id)).toBeUndefined();
    expect(await store.requests.audit(s.record.id)).toEqual([]);
    // The connection is usable afterwards: nothing of the failed write is sent with the next one.
    await store.write(async (tx) => {
      await tx.requests.insert(s);
      await tx.requests.appendAudit(s.record.id, 'created', 'admin', 1);
    });
    expect((await store.requests.audit(s.record.id)).map((r) => r.event)).toEqual(['created']);
  });

  it('lists, filters and pages history', async () => {
    const a = storedRequest({ title: 'Deploy 100% of prod', kind: 'command' });
    const b = storedRequest({
      title: 'Read a file',
      kind: 'review',
      source: { agent: 'other', session: null, cwd: null, repo: null, branch: null, integration: null },
    } as never);
    await store.write(async (tx) => {
      await tx.requests.insert(a);
      await tx.requests.insert(b);
      await tx.requests.finish({ ...a.record, status: 'denied' }, 10);
      await tx.requests.finish({ ...b.record, status: 'approved' }, 20);
    });
    expect((await store.requests.list({ limit: 10 })).map((s) => s.record.id)).toEqual([b.record.id, a.record.id]);
    expect((await store.requests.list({ agent: ['other'], limit: 10 })).map((s) => s.record.id)).toEqual([b.record.id]);
    expect((await store.requests.history({ limit: 10 })).map((s) => s.record.id)).toEqual([b.record.id, a.record.id]);
    expect((await store.requests.history({ q: '100%', limit: 10 })).map((s) => s.record.id)).toEqual([a.record.id]);
    expect((await store.requests.history({ q: '0% ', limit: 10 })).map((s) => s.record.id)).toEqual([a.record.id]);
    expect((await store.requests.history({ q: '_', limit: 10 })).map((s) => s.record.id)).toEqual([]);
    expect((await store.requests.history({ before: { resolvedAt: 20, id: b.record.id }, limit: 10 })).map((s) => s.record.id)).toEqual([a.record.id]);
  });

  it('leases each due delivery to one worker, and takes back leases whose holder is gone', async () => {
    const s = storedRequest({ callback_url: 'https://example.com/cb' });
    await store.write(async (tx) => {
      await tx.requests.insert(s);
      for (const id of ['d1', 'd2'])
        await tx.deliveries.insert({ id, requestId: s.record.id, type: 'request.decided', url: 'https://x', body: '{}', createdAt: 100 });
    });
    const lease = (node: string) => store.write((tx) => tx.deliveries.leaseDue(200, 10_000, node));
    const leased = await Promise.all([lease('a'), lease('b'), lease('c')]);
    expect(
      leased
        .filter(Boolean)
        .map((l) => l!.id)
        .sort(),
    ).toEqual(['d1', 'd2']);
    expect(await store.deliveries.nextLeaseEnd()).toBe(10_000);
    // Only 'a' is alive: the lease the other holder took is taken back, a's is left alone.
    const aHolds = leased[0] !== undefined;
    expect(await store.write((tx) => tx.deliveries.reclaimAbandoned(300, ['a']))).toBe(aHolds ? 1 : 2);
    // Past the lease, every lease is abandoned, whoever holds it.
    await store.write((tx) => tx.deliveries.reclaimAbandoned(20_000, ['a', 'b', 'c']));
    const views = await store.deliveries.listForRequest(s.record.id);
    expect(views.map((v) => v.state)).toEqual(['pending', 'pending']);
    expect(views.flatMap((v) => v.attempts.map((a) => a.error_class))).toEqual(['interrupted', 'interrupted']);
    const again = await store.write((tx) => tx.deliveries.leaseDue(30_000, 40_000, 'a'));
    expect(again?.attempt).toBe(2);
    // The interrupted attempt does not count against the retry schedule; the open one does.
    expect(await store.write((tx) => tx.deliveries.countedAttempts(again!.id))).toBe(1);
  });

  /** A request with delivery `d1`, leased by daemon `a` at 200 until 10_000. */
  async function deliveryLeasedByA() {
    const s = storedRequest({ callback_url: 'https://example.com/cb' });
    await store.write(async (tx) => {
      await tx.requests.insert(s);
      await tx.deliveries.insert({ id: 'd1', requestId: s.record.id, type: 'request.decided', url: 'https://x', body: '{}', createdAt: 100 });
    });
    await store.write((tx) => tx.deliveries.leaseDue(200, 10_000, 'a'));
    return s;
  }

  it('while who is live cannot be told, takes back only leases past their time; a holder that lost its lease changes nothing', async () => {
    const s = await deliveryLeasedByA();
    // After an outage nobody could beat: 'a' looks gone, but its lease holds until 10_000.
    expect(await store.write((tx) => tx.deliveries.reclaimAbandoned(300, null))).toBe(0);
    expect(await store.write((tx) => tx.deliveries.reclaimAbandoned(10_001, null))).toBe(1);
    const taken = await store.write((tx) => tx.deliveries.leaseDue(10_002, 20_000, 'b'));
    expect(taken?.id).toBe('d1');
    // 'a' comes back with its late result: neither its success nor its retry overwrites b's lease.
    expect(await store.write((tx) => tx.deliveries.finish('d1', 'delivered', 10_003, null, 'a'))).toBe(false);
    expect(await store.write((tx) => tx.deliveries.release('d1', 10_003, 'late', 'a'))).toBe(false);
    // Nor its attempt row: that attempt stays interrupted, off b's retry schedule.
    const late = { status: 503, latencyMs: 5, errorClass: 'http_5xx', error: 'late' } as const;
    expect(await store.write((tx) => tx.deliveries.endAttempt('d1', 1, late, 'a'))).toBe(false);
    const [row] = await store.deliveries.listForRequest(s.record.id);
    expect(row!.state).toBe('leased');
    expect(row!.attempts[0]).toMatchObject({ n: 1, status: null, error_class: 'interrupted' });
    expect(await store.write((tx) => tx.deliveries.countedAttempts('d1'))).toBe(1);
    expect(await store.write((tx) => tx.deliveries.endAttempt('d1', 2, { ...late, error: 'b' }, 'b'))).toBe(true);
    expect(await store.write((tx) => tx.deliveries.finish('d1', 'delivered', 10_004, null, 'b'))).toBe(true);
  });

  it('an attempt taken over changes nothing even when the same daemon leased the row again', async () => {
    const s = await deliveryLeasedByA();
    // Liveness known and 'a' not among the live: taken back at once, then leased by 'a' again.
    expect(await store.write((tx) => tx.deliveries.reclaimAbandoned(300, ['b']))).toBe(1);
    expect((await store.write((tx) => tx.deliveries.leaseDue(400, 10_000, 'a')))?.attempt).toBe(2);
    const ok = { status: 200, latencyMs: 5, errorClass: null, error: null };
    expect(await store.write((tx) => tx.deliveries.endAttempt('d1', 1, ok, 'a'))).toBe(false);
    expect(await store.write((tx) => tx.deliveries.endAttempt('d1', 2, ok, 'a'))).toBe(true);
    const [row] = await store.deliveries.listForRequest(s.record.id);
    expect(row!.attempts.map((x) => [x.n, x.status, x.error_class])).toEqual([
      [1, null, 'interrupted'],
      [2, 200, null],
    ]);
  });

  it('counts up without repeats under concurrent writers', async () => {
    const values = await Promise.all(Array.from({ length: 20 }, () => store.write((tx) => tx.counters.next('rpc'))));
    expect(values.sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('limits a key within its window and forgets events that left it', async () => {
    const take = (now: number) => store.rates.take('token:a', 3, 60_000, now);
    expect([await take(1000), await take(1001), await take(1002), await take(1003)]).toEqual([true, true, true, false]);
    expect(await store.rates.take('token:b', 3, 60_000, 1003)).toBe(true);
    expect(await take(70_000)).toBe(true);
    expect(await store.rates.take('token:c', 0, 60_000, 1)).toBe(true);
  });

  it('keeps a heartbeat row per daemon', async () => {
    await store.nodes.beat({ id: 'n1', version: '1', started_at: 10, last_seen: 10 });
    await store.nodes.beat({ id: 'n1', version: '1', started_at: 10, last_seen: 50 });
    await store.nodes.beat({ id: 'n2', version: '1', started_at: 20, last_seen: 30 });
    expect((await store.nodes.live(40)).map((n) => [n.id, n.last_seen])).toEqual([['n1', 50]]);
    await store.nodes.leave('n1');
    expect(await store.nodes.live(0)).toEqual([{ id: 'n2', version: '1', started_at: 20, last_seen: 30 }]);
  });

  it("answers a heartbeat with the database server's clock, or null when that is this host's (SQLite)", async () => {
    const before = Date.now();
    const server = await store.nodes.beat({ id: 'n1', version: '1', started_at: 10, last_seen: 10 });
    if (kind === 'sqlite') expect(server).toBeNull();
    // Same machine, same clock: within a minute of ours, whatever the round trip took.
    else expect(Math.abs(server! - before)).toBeLessThan(60_000);
  });

  it("creates a blob's row once: a second insert of the same hash writes nothing and its transaction goes on", async () => {
    expect(await store.write((tx) => tx.blobs.insert('sha256:cc', 3, 10))).toBe(true);
    const [again, owned] = await store.write(async (tx) => {
      const inserted = await tx.blobs.insert('sha256:cc', 4, 20);
      await tx.blobs.addOwner('token:t', 'sha256:cc', 3);
      return [inserted, await tx.blobs.usage('token:t')];
    });
    expect([again, owned]).toEqual([false, 3]);
    expect(await store.blobs.size('sha256:cc')).toBe(3);
  });

  it('keeps blobs in chunks with their uploaders and references, and sweeps only unreferenced ones', async () => {
    const r = storedRequest();
    await store.write(async (tx) => {
      await tx.requests.insert(r);
      await tx.blobs.insertChunk('upload:0000000000005:x', 0, Buffer.from('hel'));
      await tx.blobs.insertChunk('upload:0000000000005:x', 1, Buffer.from('lo'));
      await tx.blobs.renameChunks('upload:0000000000005:x', 'sha256:aa');
      await tx.blobs.insert('sha256:aa', 5, 10);
      await tx.blobs.addOwner('token:t', 'sha256:aa', 5);
      await tx.blobs.addOwner('token:t', 'sha256:aa', 5);
      await tx.blobs.insert('sha256:bb', 3, 20);
      await tx.blobs.insertChunk('sha256:bb', 0, Buffer.from('bye'));
      await tx.blobs.addRefs(r.record.id, ['sha256:bb', 'sha256:bb']);
      await tx.blobs.insertChunk('upload:0000000000001:stale', 0, Buffer.from('old'));
      await tx.blobs.insertChunk('upload:0000000000009:live', 0, Buffer.from('new'));
    });
    expect(await store.blobs.size('sha256:aa')).toBe(5);
    expect(Buffer.concat([(await store.blobs.chunk('sha256:aa', 0))!, (await store.blobs.chunk('sha256:aa', 1))!]).toString()).toBe('hello');
    expect(await store.blobs.chunk('sha256:aa', 2)).toBeUndefined();
    expect(await store.blobs.usage('token:t')).toBe(5);
    expect(await store.blobs.oldestUnreferenced()).toBe(10);
    await store.write((tx) => tx.blobs.touch('sha256:aa', 15));
    expect(await store.blobs.oldestUnreferenced()).toBe(15);
    expect(await store.write((tx) => tx.blobs.deleteStaged(5))).toBe(1);
    expect(await store.blobs.chunk('upload:0000000000009:live', 0)).toBeDefined();
    expect(await store.write((tx) => tx.blobs.claimUnreferenced(14, 10))).toEqual([]);
    const swept = await store.write(async (tx) => {
      const hashes = await tx.blobs.claimUnreferenced(100, 10);
      for (const h of hashes) await tx.blobs.delete(h);
      return hashes;
    });
    expect(swept).toEqual(['sha256:aa']);
    expect(await store.blobs.size('sha256:aa')).toBeUndefined();
    expect(await store.blobs.usage('token:t')).toBe(0);
    expect(await store.blobs.size('sha256:bb')).toBe(3);
  });

  it('refuses a second live token with the same name without failing the transaction; a revoked one frees the name', async () => {
    const token = (id: string) => ({ id, name: 'bot', digest: `d-${id}`, created_at: 1, expires_at: null, grants: [] });
    expect(await store.write((tx) => tx.tokens.insert(token('t1')))).toBe(true);
    // The losing insert writes nothing, and what else its transaction did still commits.
    const [second, alsoWritten] = await store.write(async (tx) => [
      await tx.tokens.insert(token('t2')),
      await tx.tokens.insert({ ...token('t3'), name: 'other' }),
    ]);
    expect([second, alsoWritten]).toEqual([false, true]);
    expect((await store.tokens.listLive()).map((t) => t.id)).toEqual(['t1', 't3']);
    expect(await store.write((tx) => tx.tokens.revoke('t1', 5))).toBe(true);
    expect(await store.write((tx) => tx.tokens.insert(token('t4')))).toBe(true);
    expect((await store.tokens.liveByName('bot'))?.id).toBe('t4');
  });

  it('keeps tokens with their grants', async () => {
    await store.write((tx) => tx.tokens.insert({ id: 't1', name: 'bot', digest: 'd1', created_at: 1, expires_at: null, grants: ['resolve_upstream'] }));
    expect(await store.tokens.byDigest('d1')).toMatchObject({ id: 't1', name: 'bot', grants: ['resolve_upstream'], revoked_at: null });
    expect(await store.write((tx) => tx.tokens.revoke('t1', 5))).toBe(true);
    expect(await store.write((tx) => tx.tokens.revoke('t1', 6))).toBe(false);
    expect(await store.tokens.listLive()).toEqual([]);
  });

  it('keeps web sessions: touched, revoked once, forgotten when ended', async () => {
    const row = { id: 's1', digest: 'dd', credential: 'admin:x', created_at: 1, last_seen_at: 1, idle_expires_at: 100, expires_at: 1000 };
    await store.write((tx) => tx.webSessions.insert(row));
    await store.write((tx) => tx.webSessions.touch('s1', 50, 150));
    expect(await store.webSessions.byDigest('dd')).toMatchObject({ id: 's1', last_seen_at: 50, idle_expires_at: 150, revoked_at: null });
    expect(await store.write((tx) => tx.webSessions.deleteEnded(120))).toBe(0);
    expect(await store.write((tx) => tx.webSessions.revoke('s1', 60))).toBe(true);
    expect(await store.write((tx) => tx.webSessions.revoke('s1', 61))).toBe(false);
    expect(await store.write((tx) => tx.webSessions.deleteEnded(120))).toBe(1);
    expect(await store.webSessions.byId('s1')).toBeUndefined();
  });

  it('keeps hook deliveries apart from callbacks: per hook, newest first, and leased with their hook', async () => {
    const s = storedRequest({ callback_url: 'https://example.com/cb' });
    await store.write(async (tx) => {
      await tx.requests.insert(s);
      await tx.deliveries.insert({ id: 'c1', requestId: s.record.id, type: 'request.decided', url: 'https://example.com/cb', body: '{}', createdAt: 100 });
      await tx.deliveries.insert({
        id: 'h1',
        requestId: s.record.id,
        type: 'request.created',
        hook: 'chat',
        url: 'https://chat.example/…',
        body: '{"a":1}',
        createdAt: 101,
      });
      await tx.deliveries.insert({
        id: 'h2',
        requestId: s.record.id,
        type: 'request.decided',
        hook: 'chat',
        url: 'https://chat.example/…',
        body: '{"a":2}',
        createdAt: 102,
      });
      await tx.deliveries.insert({
        id: 'p1',
        requestId: s.record.id,
        type: 'request.created',
        hook: 'phone',
        url: 'https://ntfy.example/…',
        body: '{}',
        createdAt: 103,
      });
    });
    expect((await store.deliveries.listForRequest(s.record.id)).map((d) => d.id)).toEqual(['c1']);
    expect((await store.deliveries.listForHook('chat', 10)).map((d) => [d.id, d.type])).toEqual([
      ['h2', 'request.decided'],
      ['h1', 'request.created'],
    ]);
    expect((await store.deliveries.listForHook('chat', 1)).map((d) => d.id)).toEqual(['h2']);
    expect(await store.deliveries.listForHook('nope', 10)).toEqual([]);
    const leased = [];
    for (let i = 0; i < 4; i++) leased.push(await store.write((tx) => tx.deliveries.leaseDue(1_000, 5_000, 'a')));
    expect(leased.map((l) => [l!.id, l!.hook])).toEqual([
      ['c1', null],
      ['h1', 'chat'],
      ['h2', 'chat'],
      ['p1', 'phone'],
    ]);
  });

  it('leases and reports as due only the deliveries a filter admits: callbacks, hooks, hooks not busy', async () => {
    const s = storedRequest({ callback_url: 'https://example.com/cb' });
    const row = (id: string, hook: string | null, createdAt: number) => ({
      id,
      requestId: s.record.id,
      type: 'request.created',
      hook,
      url: hook ? `https://${hook}.example/…` : 'https://example.com/cb',
      body: '{}',
      createdAt,
    });
    await store.write(async (tx) => {
      await tx.requests.insert(s);
      for (const d of [
        row('c1', null, 100),
        row('h1', 'chat', 101),
        row('p1', 'phone', 102),
        row('c2', null, 103),
        row('h2', 'chat', 104),
        row('h3', 'chat', 9_000),
      ])
        await tx.deliveries.insert(d);
    });
    const only = (callbacks: boolean, hooks: boolean, busyHooks: string[] = []) => ({ callbacks, hooks, busyHooks });
    const lease = (filter: ReturnType<typeof only>) => store.write((tx) => tx.deliveries.leaseDue(1_000, 5_000, 'a', filter)).then((l) => l?.id);

    expect(await store.deliveries.nextDue()).toBe(100);
    expect(await store.deliveries.nextDue(only(true, true))).toBe(100);
    expect(await store.deliveries.nextDue(only(true, false))).toBe(100);
    expect(await store.deliveries.nextDue(only(false, true))).toBe(101);
    expect(await store.deliveries.nextDue(only(false, true, ['chat']))).toBe(102);
    expect(await store.deliveries.nextDue(only(false, true, ['chat', 'phone']))).toBeNull();
    expect(await store.deliveries.nextDue(only(false, false))).toBeNull();

    // A busy hook's rows are passed over, callbacks and other hooks' rows are not.
    expect(await lease(only(false, true, ['chat']))).toBe('p1');
    expect(await lease(only(false, true, ['chat']))).toBeUndefined();
    expect(await lease(only(true, true, ['chat']))).toBe('c1');
    expect(await lease(only(false, false))).toBeUndefined();
    expect(await lease(only(true, false))).toBe('c2');
    expect(await lease(only(true, false))).toBeUndefined();
    // Callbacks only, or hooks but not chat: nothing left due now, and nothing later either.
    expect(await store.deliveries.nextDue(only(true, true, ['chat']))).toBeNull();
    expect(await lease(only(false, true))).toBe('h1');
    expect(await lease(only(true, true))).toBe('h2');
    // h3 is not due yet: the filter never makes a row due early.
    expect(await lease(only(true, true))).toBeUndefined();
    expect(await store.deliveries.nextDue(only(false, true, ['phone']))).toBe(9_000);
    expect(await store.deliveries.nextDue(only(true, false))).toBeNull();
    expect((await store.deliveries.listForHook('chat', 10)).map((d) => [d.id, d.state])).toEqual([
      ['h3', 'pending'],
      ['h2', 'leased'],
      ['h1', 'leased'],
    ]);
  });

  it('stores mutes, lists those in force and removes them', async () => {
    const m = (id: string, over: Record<string, unknown> = {}) => ({
      id,
      agent: 'codex',
      session: null,
      dismiss_notices: false,
      created_at: 1,
      expires_at: null,
      ...over,
    });
    await store.write(async (tx) => {
      await tx.mutes.insert(m('m1'));
      await tx.mutes.insert(m('m2', { agent: null, session: 's', dismiss_notices: true, expires_at: 500 }));
    });
    expect(await store.mutes.active(100)).toEqual([m('m1'), m('m2', { agent: null, session: 's', dismiss_notices: true, expires_at: 500 })]);
    expect((await store.mutes.active(500)).map((x) => x.id)).toEqual(['m1']);
    expect(await store.write((tx) => tx.mutes.remove('m1'))).toEqual(m('m1'));
    expect(await store.write((tx) => tx.mutes.remove('m1'))).toBeUndefined();
    expect(await store.mutes.active(100)).toHaveLength(1);
  });

  it('counts burst windows per hook and source, one writer at a time, and claims ended windows once', async () => {
    // Concurrent writers on one new source end up on one row, each seeing the other's count.
    const bump = () =>
      store.write(async (tx) => {
        const w = await tx.bursts.lock('chat', 'codex', 's-1');
        await tx.bursts.save({ ...w, windowEnd: 1_000, sent: w.sent + 1 });
        return w.sent + 1;
      });
    const counts = await Promise.all([bump(), bump(), bump()]);
    expect(counts.sort()).toEqual([1, 2, 3]);
    expect(await store.bursts.nextSummaryAt()).toBeNull();
    await store.write(async (tx) => {
      const w = await tx.bursts.lock('chat', 'codex', 's-1');
      await tx.bursts.save({ ...w, held: 2, latestRequestId: 'r9' });
      const other = await tx.bursts.lock('chat', 'claude', '');
      await tx.bursts.save({ ...other, windowEnd: 5_000, sent: 1, held: 1, latestRequestId: 'r7' });
    });
    expect(await store.bursts.nextSummaryAt()).toBe(1_000);
    const sweep = () =>
      store.write(async (tx) => {
        const ended = await tx.bursts.claimEnded(2_000, 10);
        for (const w of ended) await tx.bursts.save({ ...w, held: 0, latestRequestId: null });
        return ended;
      });
    const [a, b] = await Promise.all([sweep(), sweep()]);
    const claimed = [...a, ...b];
    expect(claimed).toEqual([{ hook: 'chat', agent: 'codex', session: 's-1', windowEnd: 1_000, sent: 3, held: 2, latestRequestId: 'r9' }]);
    expect(await store.bursts.nextSummaryAt()).toBe(5_000);
  });

  it('schedules reminders and expiring notices, claims due ones once, moves them on and drops them', async () => {
    const [a, b, c] = [storedRequest(), storedRequest(), storedRequest()];
    await store.write(async (tx) => {
      for (const x of [a, b, c]) await tx.requests.insert(x);
      await tx.notices.schedule({ requestId: a.record.id, remindAt: 100, expiringAt: null });
      await tx.notices.schedule({ requestId: b.record.id, remindAt: null, expiringAt: 50 });
      await tx.notices.schedule({ requestId: c.record.id, remindAt: null, expiringAt: null });
    });
    expect(await store.notices.nextDue()).toBe(50);
    const sweep = () =>
      store.write(async (tx) => {
        const due = await tx.notices.claimDue(100, 10);
        for (const n of due) await tx.notices.update({ requestId: n.requestId, remindAt: n.remindAt === null ? null : n.remindAt + 100, expiringAt: null });
        return due.map((n) => n.requestId);
      });
    const [x, y] = await Promise.all([sweep(), sweep()]);
    expect([...x, ...y].sort()).toEqual([a.record.id, b.record.id].sort());
    // b had only its expiring notice: its row is gone; a reminds again at 200.
    expect(await store.notices.nextDue()).toBe(200);
    await store.write((tx) => tx.notices.remove(a.record.id));
    expect(await store.notices.nextDue()).toBeNull();
  });

  it('keeps one shared key per name: the first writer wins, replace rotates it', async () => {
    const [k1, k2] = await Promise.all([store.write((tx) => tx.keys.ensure('links', 'first', 1)), store.write((tx) => tx.keys.ensure('links', 'second', 2))]);
    expect(k1).toBe(k2);
    expect(await store.keys.get('links')).toBe(k1);
    await store.write((tx) => tx.keys.replace('links', 'rotated', 3));
    expect(await store.keys.get('links')).toBe('rotated');
    expect(await store.write((tx) => tx.keys.ensure('links', 'again', 4))).toBe('rotated');
    expect(await store.keys.get('other')).toBeUndefined();
  });

  describe('policy', () => {
    const rule = (id: string, expires_at: number | null = null) => ({
      rule: { id, match: { agent: 'bot' }, action: 'approve' as const },
      created_at: 100,
      created_by: 'admin',
      expires_at,
    });

    it('keeps stored rules in the order they were added, refuses a taken id, and removes one with its hits', async () => {
      await store.write(async (tx) => {
        expect(await tx.policy.insertRule(rule('zeta'))).toBe(true);
        expect(await tx.policy.insertRule(rule('alpha'))).toBe(true);
        expect(await tx.policy.insertRule(rule('zeta'))).toBe(false);
        await tx.policy.hit('alpha', 5);
      });
      expect((await store.policy.rules(0)).map((r) => r.rule.id)).toEqual(['zeta', 'alpha']);
      expect(await store.policy.rules(0)).toContainEqual(rule('alpha'));
      const removed = await store.write((tx) => tx.policy.deleteRule('alpha'));
      expect(removed).toEqual(rule('alpha'));
      expect(await store.write((tx) => tx.policy.deleteRule('alpha'))).toBeUndefined();
      expect(await store.policy.hits()).toEqual([]);
      // A rule added again after its removal goes to the end.
      await store.write((tx) => tx.policy.insertRule(rule('alpha')));
      await store.write((tx) => tx.policy.insertRule(rule('beta')));
      expect((await store.policy.rules(0)).map((r) => r.rule.id)).toEqual(['zeta', 'alpha', 'beta']);
    });

    it('hides expired rules and deletes them with their hits, answering the deleted rows in evaluation order', async () => {
      expect(await store.policy.nextRuleExpiry()).toBeNull();
      await store.write(async (tx) => {
        await tx.policy.insertRule(rule('short', 1000));
        await tx.policy.insertRule(rule('long'));
        await tx.policy.insertRule(rule('later', 3000));
        await tx.policy.insertRule(rule('shorter', 500));
        await tx.policy.hit('short', 10);
        await tx.policy.hit('long', 11);
      });
      expect(await store.policy.nextRuleExpiry()).toBe(500);
      expect((await store.policy.rules(999)).map((r) => r.rule.id)).toEqual(['short', 'long', 'later']);
      expect((await store.policy.rules(1000)).map((r) => r.rule.id)).toEqual(['long', 'later']);
      expect(await store.write((tx) => tx.policy.deleteExpired(1000))).toEqual([rule('short', 1000), rule('shorter', 500)]);
      expect((await store.policy.hits()).map((h) => h.rule_id)).toEqual(['long']);
      expect(await store.policy.nextRuleExpiry()).toBe(3000);
      // Nothing is deleted twice.
      expect(await store.write((tx) => tx.policy.deleteExpired(1000))).toEqual([]);
      expect(await store.write((tx) => tx.policy.deleteExpired(3000))).toEqual([rule('later', 3000)]);
      expect(await store.policy.nextRuleExpiry()).toBeNull();
      expect((await store.policy.rules(5000)).map((r) => r.rule.id)).toEqual(['long']);
    });

    it('deletes an expired rule once when two transactions race', async () => {
      const other = kind === 'postgres' ? await h.open('node-b') : store;
      opened.push(other);
      await store.write(async (tx) => {
        await tx.policy.insertRule(rule('a', 1000));
        await tx.policy.insertRule(rule('b', 1000));
      });
      const raced = await Promise.all([store.write((tx) => tx.policy.deleteExpired(1000)), other.write((tx) => tx.policy.deleteExpired(1000))]);
      const ids = raced.flat().map((r) => r.rule.id);
      expect(ids.sort()).toEqual(['a', 'b']);
    });

    it('counts hits without losing any under concurrent writers', async () => {
      await Promise.all(Array.from({ length: 20 }, (_, i) => store.write((tx) => tx.policy.hit('config-rule', 1000 + i))));
      const [h] = await store.policy.hits();
      expect(h).toMatchObject({ rule_id: 'config-rule', hits: 20 });
    });

    it('starts with auto mode off at version 0; versions move, auto mode expires once and only if unchanged', async () => {
      expect(await store.policy.state()).toEqual({ version: 0, auto: { mode: 'off', until: null, set_at: null, set_by: null }, historyIndexed: true });
      await store.write((tx) => tx.policy.bumpVersion());
      await store.write((tx) => tx.policy.setAuto({ mode: 'low', until: 5000, set_at: 10, set_by: 'admin' }));
      expect(await store.policy.state()).toEqual({ version: 1, auto: { mode: 'low', until: 5000, set_at: 10, set_by: 'admin' }, historyIndexed: true });
      expect(await store.write((tx) => tx.policy.expireAuto(4999, 'timeout'))).toBe(false);
      const raced = await Promise.all([store.write((tx) => tx.policy.expireAuto(5000, 'timeout')), store.write((tx) => tx.policy.expireAuto(5000, 'timeout'))]);
      expect(raced.filter(Boolean)).toHaveLength(1);
      expect((await store.policy.state()).auto).toEqual({ mode: 'off', until: null, set_at: 5000, set_by: 'timeout' });
    });

    it('shows every write the policy state as committed, by this daemon or by another since it last read it', async () => {
      const other = kind === 'postgres' ? await h.open('node-b') : store;
      opened.push(other);
      const seen: string[] = [];
      const ids: string[] = [];
      // A create that reads the state and records what it saw, as the creation policy does.
      const create = () =>
        store.write(async (tx) => {
          const { auto } = await tx.policy.state();
          seen.push(auto.mode);
          const s = storedRequest({ title: `auto ${auto.mode}` });
          ids.push(s.record.id);
          await tx.requests.add(s);
        });
      const auto = (mode: 'off' | 'low', by: Store) => by.write((tx) => tx.policy.setAuto({ mode, until: null, set_at: 1, set_by: 'admin' }));
      await create();
      await auto('low', other);
      await create();
      await auto('off', store);
      await create();
      // On PostgreSQL the second create first ran on the row this daemon had read, was refused
      // at its COMMIT, and ran again on the row as committed: that first run left nothing.
      expect(seen).toEqual(kind === 'postgres' ? ['off', 'off', 'low', 'off'] : ['off', 'low', 'off']);
      const titles = await Promise.all(ids.map(async (id) => (await store.requests.get(id))?.record.title ?? null));
      expect(titles).toEqual(kind === 'postgres' ? ['auto off', null, 'auto low', 'auto off'] : ['auto off', 'auto low', 'auto off']);
    });

    it('keeps the facts of ended requests once, and reads those of a window newest first, in pages', async () => {
      const facts = (id: string, status: string) => JSON.stringify({ id, status });
      await store.write(async (tx) => {
        await tx.policy.indexEnded('r1', 100, facts('r1', 'approved'));
        await tx.policy.indexEnded('r2', 200, facts('r2', 'denied'));
        await tx.policy.indexEnded('r3', 300, facts('r3', 'cancelled'));
        await tx.policy.indexEnded('r2', 250, facts('r2', 'approved'));
      });
      const ended = await store.policy.ended({ since: 100, until: 299, limit: 10 });
      expect(ended.map((e) => [JSON.parse(e.facts).id, JSON.parse(e.facts).status, e.resolvedAt])).toEqual([
        ['r2', 'denied', 200],
        ['r1', 'approved', 100],
      ]);
      expect((await store.policy.ended({ since: 0, until: 1000, limit: 1 })).map((e) => JSON.parse(e.facts).id)).toEqual(['r3']);
      const next = await store.policy.ended({ since: 0, until: 1000, limit: 1, before: { resolvedAt: 300, id: 'r3' } });
      expect(next.map((e) => JSON.parse(e.facts).id)).toEqual(['r2']);
    });

    it('lists ended requests by id for indexing older history', async () => {
      const [a, b, c] = [storedRequest(), storedRequest({}, { format: 'ask', nativeKey: 'k' }), storedRequest()];
      await store.write(async (tx) => {
        for (const s of [a, b, c]) await tx.requests.insert(s!);
        await tx.requests.finish({ ...a!.record, status: 'approved' }, 100);
        await tx.requests.finish({ ...b!.record, status: 'denied' }, 200);
      });
      const all = await store.policy.endedRecords('', 10);
      expect(all.map((e) => [e.record.id, e.record.status, e.format, e.resolvedAt])).toEqual([
        [a!.record.id, 'approved', 'handup', 100],
        [b!.record.id, 'denied', 'ask', 200],
      ]);
      expect((await store.policy.endedRecords(a!.record.id, 10)).map((e) => e.record.id)).toEqual([b!.record.id]);
      await store.write((tx) => tx.policy.markHistoryIndexed());
      expect((await store.policy.state()).historyIndexed).toBe(true);
    });

    it('keeps a policy audit log, newest first', async () => {
      await store.write(async (tx) => {
        await tx.policy.appendAudit('rule.added', 'admin', 1, 'r1', { action: 'approve' });
        await tx.policy.appendAudit('auto.changed', 'admin', 2, null);
      });
      expect(await store.policy.audit(10)).toEqual([
        { id: expect.any(Number), event: 'auto.changed', actor: 'admin', at: 2, subject: null },
        { id: expect.any(Number), event: 'rule.added', actor: 'admin', at: 1, subject: 'r1', details: { action: 'approve' } },
      ]);
    });
  });

  if (kind === 'sqlite') {
    it('describes itself by file name only', () => {
      expect(store.info).toEqual({ kind: 'sqlite', location: 'countersign.db' });
    });
  }

  if (kind === 'postgres') {
    it('tells other daemons about committed changes, never a daemon about its own or about a rolled-back one', async () => {
      const other = await h.open('node-b');
      opened.push(other);
      const heardByA: Change[] = [];
      const heardByB: Change[] = [];
      store.onRemoteChange((c) => heardByA.push(c));
      const got = new Promise<void>((resolve) => other.onRemoteChange((c) => (heardByB.push(c), c.type === 'request.decided' && resolve())));
      await store
        .write(async (tx) => {
          tx.announce({ type: 'request.created', requestId: 'rolled-back' });
          throw new Error('no');
        })
        .catch(() => {});
      await store.write(async (tx) => {
        tx.announce({ type: 'request.created', requestId: 'r1' });
        tx.announce({ type: 'request.decided', requestId: 'r1' });
      });
      await got;
      expect(heardByB).toEqual([
        { type: 'request.created', requestId: 'r1' },
        { type: 'request.decided', requestId: 'r1' },
      ]);
      expect(heardByA).toEqual([]);
      expect(store.info.kind).toBe('postgres');
      expect(store.info.location).not.toMatch(/postgres@|password/);
    });
  }
});

describe('the sqlite store file', () => {
  it('is readable by its owner only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'countersign-store-'));
    const store = openSqliteStore(join(dir, 'countersign.db'), { synchronous: 'full' });
    await store.write((tx) => tx.counters.next('x'));
    for (const f of ['countersign.db', 'countersign.db-wal', 'countersign.db-shm']) expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

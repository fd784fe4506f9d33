import { afterEach, describe, expect, it } from 'vitest';
import { createFakeClock, type FakeClock } from '../helpers/fake-clock.js';
import { expectValidRequest } from '../helpers/upstream-schemas.js';
import { createRequest, decide, expectError } from '../helpers/request-api.js';
import { startTestServer, TEST_STORE, type TestServer } from '../helpers/test-server.js';

const ids = (list: Array<{ id: string }>) => list.map((r) => r.id);

describe('GET /v1/requests', () => {
  let t: TestServer;
  afterEach(async () => t?.close());

  async function list(query = ''): Promise<any[]> {
    const res = await t.api.get(`/v1/requests${query}`);
    expect(res.status, res.text).toBe(200);
    for (const r of res.body) expectValidRequest(r);
    return res.body;
  }

  it('lists newest first and filters by status, kind, format, agent and session (comma lists OR, fields AND)', async () => {
    t = await startTestServer();
    const a = await createRequest(t.api, { title: 'a', kind: 'command', source: { agent: 'codex', session: 's1' } });
    const b = await createRequest(t.api, { title: 'b', kind: 'edit', source: { agent: 'claude', session: 's1' } });
    const c = await createRequest(t.api, { title: 'c', kind: 'command', source: { agent: 'claude', session: 's2' } });
    const d = await createRequest(t.api, { title: 'd', kind: 'info', source: { agent: 'codex' } });
    await decide(t.api, b, 'approve');
    await t.api.post(`/v1/requests/${d.id}/cancel`);

    expect(ids(await list())).toEqual([d.id, c.id, b.id, a.id]);
    expect(ids(await list('?status=pending'))).toEqual([c.id, a.id]);
    expect(ids(await list('?status=approved,cancelled'))).toEqual([d.id, b.id]);
    expect(ids(await list('?status=denied'))).toEqual([]);
    expect(ids(await list('?kind=command'))).toEqual([c.id, a.id]);
    expect(ids(await list('?kind=edit,info'))).toEqual([d.id, b.id]);
    expect(ids(await list('?format=handup'))).toEqual([d.id, c.id, b.id, a.id]);
    expect(ids(await list('?format=roll,alp'))).toEqual([]);
    expect(ids(await list('?agent=codex'))).toEqual([d.id, a.id]);
    expect(ids(await list('?agent=codex,claude'))).toEqual([d.id, c.id, b.id, a.id]);
    expect(ids(await list('?session=s1'))).toEqual([b.id, a.id]);
    expect(ids(await list('?session=s2,s1&agent=claude'))).toEqual([c.id, b.id]);
    expect(ids(await list('?status=pending&kind=command&agent=claude'))).toEqual([c.id]);
    expect(ids(await list('?agent=nobody'))).toEqual([]);
    expect(ids(await list('?limit=2'))).toEqual([d.id, c.id]);
    // The list shows each record in its current state.
    expect((await list('?status=approved'))[0].status).toBe('approved');
  });

  it('defaults to 100 items and allows up to 500', async () => {
    t = await startTestServer();
    for (let i = 0; i < 102; i++) expect((await t.api.post('/v1/requests', { title: `r${i}` })).status).toBe(201);
    const dflt = await list();
    expect(dflt).toHaveLength(100);
    expect(dflt[0].title).toBe('r101');
    expect(dflt[99].title).toBe('r2');
    expect(await list('?limit=500')).toHaveLength(102);
  });
});

describe('GET /v1/history', () => {
  let t: TestServer;
  let clock: FakeClock;
  afterEach(async () => t?.close());

  async function history(query = ''): Promise<{ items: any[]; next_cursor: string | null }> {
    const res = await t.api.get(`/v1/history${query}`);
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['items', 'next_cursor']);
    for (const item of res.body.items) {
      expect(Object.keys(item).sort()).toEqual(['outcome', 'request', 'resolved_at']);
      expectValidRequest(item.request);
      expect(item.outcome).toBe(item.request.status);
    }
    return res.body;
  }

  it('lists resolved requests newest resolution first, with outcome and resolved_at', async () => {
    clock = createFakeClock();
    t = await startTestServer({}, { clock });
    const a = await createRequest(t.api, { title: 'a', timeout: '1h' });
    const b = await createRequest(t.api, { title: 'b' });
    const c = await createRequest(t.api, { title: 'c', kind: 'question', input: { questions: [{ id: 'q', question: '?', allow_free_text: true }] } });
    const d = await createRequest(t.api, { title: 'd', kind: 'info' });
    const e = await createRequest(t.api, { title: 'e' });
    const pending = await createRequest(t.api, { title: 'still pending' });

    clock.advance(1000);
    await decide(t.api, c, 'submit', { fields: { answers: { q: { text: 'yes' } } } });
    clock.advance(1000);
    await decide(t.api, b, 'deny');
    clock.advance(1000);
    await t.api.post(`/v1/requests/${e.id}/cancel`);
    clock.advance(1000);
    await decide(t.api, d, 'ok');
    const start = a.created_at;
    clock.set(a.expires_at!); // a expires; the sweep runs after this returns
    expect((await t.api.get(`/v1/requests/${a.id}/wait?timeout=10s`)).body.status).toBe('expired');

    const page = await history();
    expect(page.next_cursor).toBeNull();
    expect(page.items.map((i) => [i.request.id, i.outcome, i.resolved_at])).toEqual([
      [a.id, 'expired', start + 3_600_000],
      [d.id, 'dismissed', start + 4000],
      [e.id, 'cancelled', start + 3000],
      [b.id, 'denied', start + 2000],
      [c.id, 'answered', start + 1000],
    ]);
    expect(ids(page.items.map((i) => i.request))).not.toContain(pending.id);
    // For decisions resolved_at is the decision time.
    expect(page.items[3].request.decision.decided_at).toBe(page.items[3].resolved_at);
  });

  it('filters by outcome, kind, agent and q (case-insensitive substring of title, summary, cwd)', async () => {
    t = await startTestServer();
    const mk = async (body: Record<string, unknown>, option: string | null) => {
      const r = await createRequest(t.api, body);
      if (option) expect((await decide(t.api, r, option)).status).toBe(200);
      else expect((await t.api.post(`/v1/requests/${r.id}/cancel`)).status).toBe(200);
      return r;
    };
    const deploy = await mk({ title: 'Deploy STAGING', kind: 'command', source: { agent: 'codex' } }, 'approve');
    const migrate = await mk({ title: 'Run migration', summary: 'alters the staging db', kind: 'command', source: { agent: 'claude' } }, 'deny');
    const edit = await mk({ title: 'Edit file', kind: 'edit', source: { agent: 'claude', cwd: '/srv/Staging-app' } }, null);
    const pct = await mk({ title: 'Raise limit to 50%', source: { agent: 'codex' } }, 'approve');
    const accents = await mk({ title: 'Étape Über', source: { agent: 'codex' } }, 'deny');

    const got = async (q: string) => ids((await history(q)).items.map((i) => i.request));
    expect(await got('?outcome=approved')).toEqual([pct.id, deploy.id]);
    expect(await got('?outcome=denied,cancelled')).toEqual([accents.id, edit.id, migrate.id]);
    expect(await got('?outcome=expired')).toEqual([]);
    expect(await got('?kind=command')).toEqual([migrate.id, deploy.id]);
    expect(await got('?kind=edit,custom')).toEqual([accents.id, pct.id, edit.id]);
    expect(await got('?agent=claude')).toEqual([edit.id, migrate.id]);
    expect(await got('?agent=codex&outcome=approved&kind=command')).toEqual([deploy.id]);
    expect(await got('?q=staging')).toEqual([edit.id, migrate.id, deploy.id]);
    expect(await got('?q=STAGING&agent=claude')).toEqual([edit.id, migrate.id]);
    expect(await got(`?q=${encodeURIComponent('50%')}`)).toEqual([pct.id]);
    // LIKE wildcards have no special meaning.
    expect(await got(`?q=${encodeURIComponent('%')}`)).toEqual([pct.id]);
    expect(await got(`?q=${encodeURIComponent('_')}`)).toEqual([]);
    expect(await got('?q=nothing-matches')).toEqual([]);
    // The exact text always finds itself; SQLite folds case beyond ASCII too (PostgreSQL as far
    // as the database's locale does).
    const folded = TEST_STORE === 'sqlite' ? ['Étape', 'étape', 'ÉTAPE', 'über', 'ÜBER'] : ['Étape', 'Über', 'TAPE'];
    for (const q of folded) expect(await got(`?q=${encodeURIComponent(q)}`), q).toEqual([accents.id]);
  });

  it('searches past a request with U+0000 in its text (PostgreSQL cannot hold it in jsonb), and finds that one too', async () => {
    t = await startTestServer();
    const nul = await createRequest(t.api, {
      title: 'Deploy a null\u0000byte',
      summary: 'a literal \\u0000 in code, then a real one:\u0000',
      input: { note: 'a\u0000b' },
      previews: [{ type: 'text', inline: 'x\u0000\u0000y' }],
    });
    expect((await t.api.post(`/v1/requests/${nul.id}/cancel`)).status).toBe(200);
    const other = await createRequest(t.api, { title: 'Plain deploy' });
    expect((await decide(t.api, other, 'approve')).status).toBe(200);
    for (const q of ['?q=deploy', '?outcome=auto', '?q=literal', '?q=byte']) expect((await history(q)).items, q).toBeDefined();
    // (Text after a U+0000 is not searched on SQLite, whose text functions stop there.)
    expect(ids((await history('?q=deploy')).items.map((i) => i.request))).toEqual([other.id, nul.id]);
    expect(ids((await history(`?q=${encodeURIComponent('\\u0000')}`)).items.map((i) => i.request))).toEqual([nul.id]);
  });

  it('pages with the cursor: every resolved request exactly once, newest first, ties included', async () => {
    clock = createFakeClock();
    t = await startTestServer({}, { clock });
    const resolved: string[] = [];
    for (let i = 0; i < 23; i++) {
      const r = await createRequest(t.api, { title: `r${i}`, source: { agent: i % 2 ? 'odd' : 'even' } });
      // Several resolutions share a millisecond, so the cursor must break ties by id.
      if (i % 3 === 0) clock.advance(1);
      if (i % 5 === 4) continue; // stays pending
      expect((await decide(t.api, r, i % 2 ? 'approve' : 'deny')).status).toBe(200);
      resolved.push(r.id);
    }
    const all = (await history('?limit=500')).items;
    expect(all).toHaveLength(resolved.length);

    const seen: any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { items: any[]; next_cursor: string | null } = await history(`?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.items.length).toBeLessThanOrEqual(4);
      seen.push(...page.items);
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(Math.ceil(resolved.length / 4));
    expect(seen.map((i) => i.request.id)).toEqual(all.map((i) => i.request.id));
    expect(new Set(seen.map((i) => i.request.id))).toEqual(new Set(resolved));
    for (let i = 1; i < seen.length; i++) {
      const [prev, cur] = [seen[i - 1], seen[i]];
      expect(prev.resolved_at > cur.resolved_at || (prev.resolved_at === cur.resolved_at && prev.request.id > cur.request.id)).toBe(true);
    }

    // With a filter the cursor pages the filtered set.
    const odd: string[] = [];
    cursor = null;
    do {
      const page: { items: any[]; next_cursor: string | null } = await history(`?limit=3&agent=odd${cursor ? `&cursor=${cursor}` : ''}`);
      odd.push(...page.items.map((i) => i.request.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(odd).toEqual(all.filter((i) => i.request.source.agent === 'odd').map((i) => i.request.id));
  });

  it('a page that ends exactly at the last item has no next_cursor', async () => {
    t = await startTestServer();
    for (let i = 0; i < 3; i++) await decide(t.api, await createRequest(t.api, { title: `r${i}` }), 'approve');
    expect((await history('?limit=3')).next_cursor).toBeNull();
    const first = await history('?limit=2');
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await history(`?limit=2&cursor=${first.next_cursor}`);
    expect(second.items).toHaveLength(1);
    expect(second.next_cursor).toBeNull();
  });

  it('refuses a cursor that was not issued by the endpoint', async () => {
    t = await startTestServer();
    expectError(await t.api.get(`/v1/history?cursor=${Buffer.from('12.notanid').toString('base64url')}`), 400, 'invalid_request', 'cursor');
  });
});

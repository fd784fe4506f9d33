import { afterEach, describe, expect, it } from 'vitest';
import { createFakeClock, type FakeClock } from '../helpers/fake-clock.js';
import { expectValidRequest } from '../helpers/upstream-schemas.js';
import { createRequest, decide, expectError, show } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** The request lifecycle over real HTTP: every served Request, in every status, is schema-valid. */

const QUESTIONS = [
  { id: 'db', question: 'Which database?', options: [{ label: 'Postgres' }, { label: 'SQLite' }] },
  { id: 'langs', question: 'Which languages?', multi: true, options: [{ label: 'Go' }, { label: 'Rust' }, { label: 'TS' }] },
  { id: 'note', question: 'Anything else?', allow_free_text: true },
];

describe('request lifecycle', () => {
  let t: TestServer;
  afterEach(async () => t?.close());

  async function audit(id: string) {
    const res = await t.api.get(`/v1/requests/${id}/audit`);
    expect(res.status, res.text).toBe(200);
    return res.body as Array<{ id: number; request_id: string; event: string; actor: string; at: number; details?: unknown }>;
  }

  describe('decisions', () => {
    it('approves: status approved, decision recorded, audit created then decided', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'Deploy staging', kind: 'command', source: { agent: 'codex' } });
      expect(r).toMatchObject({ status: 'pending', decision: null, kind: 'command', on_timeout: 'deny', expires_at: null });
      expect(r.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(r.content_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(r.options.map((o: any) => o.id)).toEqual(['approve', 'deny']);

      const res = await decide(t.api, r, 'approve');
      expect(res.status, res.text).toBe(200);
      expectValidRequest(res.body);
      expect(res.body.status).toBe('approved');
      expect(res.body.decision).toMatchObject({
        option: 'approve',
        outcome: 'approve',
        content_hash: r.content_hash,
        decided_by: 'admin',
        feedback: null,
      });
      expect(res.body.decision.decided_at).toBeGreaterThanOrEqual(r.created_at);
      expect(await show(t.api, r.id)).toEqual(res.body);

      const rows = await audit(r.id);
      expect(rows.map((a) => [a.event, a.actor])).toEqual([
        ['created', 'admin'],
        ['decided', 'admin'],
      ]);
      for (const row of rows) {
        expect(row.request_id).toBe(r.id);
        expect(row.at).toBeGreaterThanOrEqual(r.created_at);
      }
      expect(rows[1]!.details).toMatchObject({ option: 'approve', outcome: 'approve' });
    });

    it('denies without feedback when feedback is optional', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'rm -rf build' });
      const res = await decide(t.api, r, 'deny');
      expect(res.status, res.text).toBe(200);
      expectValidRequest(res.body);
      expect(res.body).toMatchObject({ status: 'denied', decision: { option: 'deny', outcome: 'deny', feedback: null } });
    });

    it('requires feedback to deny when input.feedback is required_on_deny', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'Push to main', input: { feedback: 'required_on_deny' } });
      expectError(await decide(t.api, r, 'deny'), 400, 'invalid_decision', 'feedback');
      expectError(await decide(t.api, r, 'deny', { feedback: '   ' }), 400, 'invalid_decision', 'feedback');
      expect((await show(t.api, r.id)).status).toBe('pending');

      const res = await decide(t.api, r, 'deny', { feedback: 'use a PR' });
      expect(res.status, res.text).toBe(200);
      expectValidRequest(res.body);
      expect(res.body).toMatchObject({ status: 'denied', decision: { outcome: 'deny', feedback: 'use a PR' } });
      expect((await audit(r.id)).at(-1)).toMatchObject({ event: 'decided', details: { feedback: 'use a PR' } });
    });

    it('approves a required_on_deny request without feedback', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'Push', input: { feedback: 'required_on_deny' } });
      const res = await decide(t.api, r, 'approve');
      expect(res.status, res.text).toBe(200);
      expect(res.body.status).toBe('approved');
    });

    it('uses custom options and their outcomes', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, {
        title: 'Merge?',
        options: [
          { id: 'merge', label: 'Merge', outcome: 'approve' },
          { id: 'later', label: 'Later', outcome: 'deny', style: null },
        ],
      });
      const res = await decide(t.api, r, 'later');
      expect(res.status, res.text).toBe(200);
      expectValidRequest(res.body);
      expect(res.body).toMatchObject({ status: 'denied', decision: { option: 'later', outcome: 'deny' } });
    });

    it('refuses an unknown option with 400 invalid_decision naming option', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'x' });
      expectError(await decide(t.api, r, 'maybe'), 400, 'invalid_decision', 'option');
      expect((await show(t.api, r.id)).status).toBe('pending');
    });

    it('refuses a stale content_hash with 412 and changes nothing', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'x' });
      const stale = { id: r.id, content_hash: `sha256:${'0'.repeat(64)}` };
      expectError(await decide(t.api, stale, 'approve'), 412, 'content_hash_mismatch');
      const after = await show(t.api, r.id);
      expect(after.status).toBe('pending');
      expect((await audit(r.id)).map((a) => a.event)).toEqual(['created']);
    });

    it('first decision wins: a late decision is 409 not_pending', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'x' });
      expect((await decide(t.api, r, 'approve')).status).toBe(200);
      expectError(await decide(t.api, r, 'deny'), 409, 'not_pending');
      // Even a stale hash on a decided request reports the state, not the hash.
      expectError(await decide(t.api, { id: r.id, content_hash: 'sha256:00' }, 'deny'), 409, 'not_pending');
      expectError(await t.api.post(`/v1/requests/${r.id}/cancel`), 409, 'not_pending');
      const after = await show(t.api, r.id);
      expect(after.status).toBe('approved');
      expect((await audit(r.id)).map((a) => a.event)).toEqual(['created', 'decided']);
    });

    it('concurrent decisions and a cancel: exactly one wins, the rest are 409', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'race' });
      const calls = [...Array.from({ length: 8 }, (_, i) => decide(t.api, r, i % 2 ? 'approve' : 'deny')), t.api.post(`/v1/requests/${r.id}/cancel`)];
      const results = await Promise.all(calls);
      const winners = results.filter((x) => x.status === 200);
      expect(winners).toHaveLength(1);
      for (const loser of results.filter((x) => x.status !== 200)) expectError(loser, 409, 'not_pending');
      const after = await show(t.api, r.id);
      expect(after).toEqual(winners[0]!.body);
      expect((await audit(r.id)).map((a) => a.event)).toHaveLength(2);
    });

    it('404 for deciding or cancelling an unknown request', async () => {
      t = await startTestServer();
      const id = '01KDXB5M000000000000000000';
      expectError(await decide(t.api, { id, content_hash: 'sha256:00' }, 'approve'), 404, 'not_found');
      expectError(await t.api.post(`/v1/requests/${id}/cancel`), 404, 'not_found');
      expectError(await t.api.get(`/v1/requests/${id}`), 404, 'not_found');
      expectError(await t.api.get(`/v1/requests/${id}/audit`), 404, 'not_found');
    });
  });

  describe('questions', () => {
    it('defaults options to submit/decline and ends answered with every answer stored', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'Setup', kind: 'question', input: { questions: QUESTIONS } });
      expect(r.options).toEqual([
        { id: 'submit', label: 'Submit', outcome: 'approve', style: 'primary' },
        { id: 'decline', label: 'Decline', outcome: 'deny', style: 'danger' },
      ]);
      const answers = {
        db: { selected: ['SQLite'] },
        langs: { selected: ['Go', 'TS'] },
        note: { selected: [], text: 'ship it friday' },
      };
      const res = await decide(t.api, r, 'submit', { fields: { answers } });
      expect(res.status, res.text).toBe(200);
      expectValidRequest(res.body);
      expect(res.body.status).toBe('answered');
      expect(res.body.decision).toMatchObject({ option: 'submit', outcome: 'approve', fields: { answers } });
    });

    it('accepts a free-text answer without a selection, and text beside a selection', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, {
        title: 'Pick',
        kind: 'question',
        input: { questions: [{ id: 'q', question: 'Name?', options: [{ label: 'A' }], allow_free_text: true }] },
      });
      const res = await decide(t.api, r, 'submit', { fields: { answers: { q: { text: 'custom', selected: ['A'] } } } });
      expect(res.status, res.text).toBe(200);
      expectValidRequest(res.body);
      expect(res.body.decision.fields.answers.q).toEqual({ selected: ['A'], text: 'custom' });
    });

    it('stores an answer given only as text with selected normalised to []', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, {
        title: 'Pick',
        kind: 'question',
        input: { questions: [{ id: 'q', question: 'Name?', allow_free_text: true }] },
      });
      const res = await decide(t.api, r, 'submit', { fields: { answers: { q: { text: 'mine' } } } });
      expect(res.status, res.text).toBe(200);
      expectValidRequest(res.body);
      expect(res.body.decision.fields.answers.q).toEqual({ selected: [], text: 'mine' });
    });

    const bad: Array<[string, unknown, string]> = [
      ['no answers at all', undefined, 'fields.answers.db'],
      ['a missing answer', { db: { selected: ['SQLite'] }, langs: { selected: ['Go'] } }, 'fields.answers.note'],
      ['a label that is not an option', { db: { selected: ['MySQL'] }, langs: { selected: ['Go'] }, note: { text: 'x' } }, 'fields.answers.db.selected'],
      [
        'two labels on a single-choice question',
        { db: { selected: ['SQLite', 'Postgres'] }, langs: { selected: ['Go'] }, note: { text: 'x' } },
        'fields.answers.db.selected',
      ],
      [
        'text where allow_free_text is false',
        { db: { selected: ['SQLite'], text: 'hmm' }, langs: { selected: ['Go'] }, note: { text: 'x' } },
        'fields.answers.db.text',
      ],
      ['an empty answer', { db: { selected: [] }, langs: { selected: ['Go'] }, note: { text: 'x' } }, 'fields.answers.db'],
      ['an answer to no question', { db: { selected: ['SQLite'] }, langs: { selected: ['Go'] }, note: { text: 'x' }, zz: { text: 'x' } }, 'fields.answers.zz'],
      ['the same label twice', { db: { selected: ['SQLite'] }, langs: { selected: ['Go', 'Go'] }, note: { text: 'x' } }, 'fields.answers.langs.selected'],
    ];
    it.each(bad)('refuses a submit with %s (400 invalid_decision naming the field)', async (_name, answers, field) => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'Setup', kind: 'question', input: { questions: QUESTIONS } });
      const res = await decide(t.api, r, 'submit', answers === undefined ? {} : { fields: { answers } });
      expectError(res, 400, 'invalid_decision', field);
      const after = await show(t.api, r.id);
      expect(after.status).toBe('pending');
    });

    it('declines without answers: status denied', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'Setup', kind: 'question', input: { questions: QUESTIONS } });
      const res = await decide(t.api, r, 'decline', { feedback: 'not now' });
      expect(res.status, res.text).toBe(200);
      expectValidRequest(res.body);
      expect(res.body).toMatchObject({ status: 'denied', decision: { option: 'decline', outcome: 'deny', feedback: 'not now' } });
    });

    it('a decline keeps answers given so far, checked as a submit checks them; nothing but answers', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'Setup', kind: 'question', input: { questions: QUESTIONS } });
      for (const [fields, field] of [
        [{ answers: { nope: { selected: ['zzz'] } } }, 'fields.answers.nope'],
        [{ answers: { db: { selected: ['MySQL'] } } }, 'fields.answers.db.selected'],
        [{ answers: {}, extra: { a: 1 } }, 'fields.extra'],
      ] as const) {
        expectError(await decide(t.api, r, 'decline', { fields }), 400, 'invalid_decision', field);
      }
      expect((await show(t.api, r.id)).status).toBe('pending');
      const res = await decide(t.api, r, 'decline', { fields: { answers: { db: { selected: ['SQLite'] } } } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.decision.fields).toEqual({ answers: { db: { selected: ['SQLite'] } } });
    });

    it('refuses answers on a request that is not a question', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'x' });
      expectError(await decide(t.api, r, 'approve', { fields: { answers: { q: { text: 'x' } } } }), 400, 'invalid_decision', 'fields.answers');
    });
  });

  describe('info notices', () => {
    it.each(['ok', 'dismiss'])('option %s ends dismissed', async (option) => {
      t = await startTestServer();
      const r = await createRequest(t.api, {
        title: 'Build finished',
        kind: 'info',
        on_timeout: 'approve',
        timeout: '1h',
        options: [{ id: 'yes', label: 'Yes', outcome: 'approve' }],
      });
      expect(r.options).toEqual([
        { id: 'ok', label: 'OK', outcome: 'approve', style: 'primary' },
        { id: 'dismiss', label: 'Dismiss', outcome: 'deny', style: null },
      ]);
      expect(r.on_timeout).toBe('expire');
      expect(r.input).toBeNull();
      const res = await decide(t.api, r, option, option === 'dismiss' ? { feedback: 'seen' } : {});
      expect(res.status, res.text).toBe(200);
      expectValidRequest(res.body);
      expect(res.body.status).toBe('dismissed');
      expect(res.body.decision.option).toBe(option);
      expect(res.body.decision.outcome).toBe(option === 'ok' ? 'approve' : 'deny');
      expect((await audit(r.id)).map((a) => a.event)).toEqual(['created', 'decided']);
    });
  });

  describe('cancel', () => {
    it('takes no body, an empty one sent as JSON, or {}', async () => {
      t = await startTestServer();
      const bodies = [
        { raw: '' },
        { raw: '', headers: { 'content-type': 'application/json' } },
        { raw: '{}', headers: { 'content-type': 'application/json' } },
      ];
      for (const opts of bodies) {
        const r = await createRequest(t.api, { title: 'x' });
        const res = await t.api.request('POST', `/v1/requests/${r.id}/cancel`, undefined, opts);
        expect(res.status, `${JSON.stringify(opts)}: ${res.text}`).toBe(200);
      }
    });

    it('cancels a pending request; later decisions and cancels are 409', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'x' });
      const res = await t.api.post(`/v1/requests/${r.id}/cancel`);
      expect(res.status, res.text).toBe(200);
      expectValidRequest(res.body);
      expect(res.body).toMatchObject({ id: r.id, status: 'cancelled', decision: null });
      expectError(await decide(t.api, r, 'approve'), 409, 'not_pending', 'cancelled');
      expectError(await t.api.post(`/v1/requests/${r.id}/cancel`), 409, 'not_pending');
      const rows = await audit(r.id);
      expect(rows.map((a) => [a.event, a.actor])).toEqual([
        ['created', 'admin'],
        ['cancelled', 'admin'],
      ]);
      expectValidRequest(await show(t.api, r.id));
    });

    it('takes no body: an empty one sent as application/json is fine (cancel and token revoke); a decision still needs one', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'x' });
      const json = { headers: { 'content-type': 'application/json' } };
      const cancelled = await t.api.request('POST', `/v1/requests/${r.id}/cancel`, undefined, { ...json, raw: '' });
      expect(cancelled.status, cancelled.text).toBe(200);
      expect(cancelled.body).toMatchObject({ id: r.id, status: 'cancelled' });
      expect((await t.api.post('/v1/tokens', { name: 'bot' })).status).toBe(201);
      const revoked = await t.api.request('DELETE', '/v1/tokens/bot', undefined, { ...json, raw: '' });
      expect(revoked.status, revoked.text).toBe(200);
      const other = await createRequest(t.api, { title: 'y' });
      expectError(await t.api.request('POST', `/v1/requests/${other.id}/decision`, undefined, { ...json, raw: '' }), 400, 'invalid_decision', 'empty');
    });

    it('records the submit token as the actor when the submitter cancels', async () => {
      t = await startTestServer();
      const bot = await t.submitClient('ci-bot');
      const created = await bot.api.post('/v1/requests', { title: 'x' });
      expect(created.status).toBe(201);
      expectValidRequest(created.body);
      const res = await bot.api.post(`/v1/requests/${created.body.id}/cancel`);
      expect(res.status, res.text).toBe(200);
      expectValidRequest(res.body);
      expect((await audit(created.body.id)).map((a) => [a.event, a.actor])).toEqual([
        ['created', 'token:ci-bot'],
        ['cancelled', 'token:ci-bot'],
      ]);
    });
  });

  describe('expiry (fake clock)', () => {
    let clock: FakeClock;

    async function expireOne(body: Record<string, unknown>) {
      clock = createFakeClock();
      t = await startTestServer({}, { clock });
      const r = await createRequest(t.api, { title: 'Deploy', timeout: '10m', ...body });
      expect(r.expires_at).toBe(r.created_at + 600_000);
      clock.advance(599_999);
      expect((await show(t.api, r.id)).status).toBe('pending');
      clock.advance(1);
      await t.server.settled();
      const after = await show(t.api, r.id);
      return { r, after };
    }

    it('on_timeout deny (the default): expired with a deny decision by "timeout"', async () => {
      const { r, after } = await expireOne({});
      expect(after.status).toBe('expired');
      expect(after.decision).toEqual({
        option: 'deny',
        outcome: 'deny',
        content_hash: r.content_hash,
        feedback: null,
        fields: null,
        decided_by: 'timeout',
        decided_at: r.expires_at,
      });
      const rows = await audit(r.id);
      expect(rows.map((a) => [a.event, a.actor, a.at])).toEqual([
        ['created', 'admin', r.created_at],
        ['expired', 'timeout', r.expires_at],
      ]);
    });

    it('on_timeout approve: expired with an approve decision', async () => {
      const { r, after } = await expireOne({ on_timeout: 'approve' });
      expect(after.status).toBe('expired');
      expect(after.decision).toMatchObject({ option: 'approve', outcome: 'approve', decided_by: 'timeout', decided_at: r.expires_at });
    });

    it('on_timeout approve on a question uses its approve option (submit)', async () => {
      const { after } = await expireOne({ on_timeout: 'approve', kind: 'question', input: { questions: QUESTIONS } });
      expect(after.status).toBe('expired');
      expect(after.decision).toMatchObject({ option: 'submit', outcome: 'approve', decided_by: 'timeout' });
    });

    it('on_timeout expire: expired with no decision', async () => {
      const { r, after } = await expireOne({ on_timeout: 'expire' });
      expect(after.status).toBe('expired');
      expect(after.decision).toBeNull();
      expect((await audit(r.id)).map((a) => [a.event, a.actor])).toEqual([
        ['created', 'admin'],
        ['expired', 'timeout'],
      ]);
    });

    it('info notices expire without a decision', async () => {
      const { after } = await expireOne({ kind: 'info' });
      expect(after).toMatchObject({ status: 'expired', decision: null, on_timeout: 'expire' });
    });

    it('a decision after expiry is 409 not_pending', async () => {
      const { r } = await expireOne({});
      expectError(await decide(t.api, r, 'approve'), 409, 'not_pending', 'expired');
      expectError(await t.api.post(`/v1/requests/${r.id}/cancel`), 409, 'not_pending');
    });

    it('"none" and null never expire; requests.default_timeout applies when timeout is absent', async () => {
      clock = createFakeClock();
      t = await startTestServer({ requests: { default_timeout: '1h' } }, { clock });
      const none = await createRequest(t.api, { title: 'a', timeout: 'none' });
      const nul = await createRequest(t.api, { title: 'b', timeout: null });
      const dflt = await createRequest(t.api, { title: 'c' });
      expect(none).toMatchObject({ expires_at: null, timeout: null });
      expect(nul).toMatchObject({ expires_at: null, timeout: null });
      expect(dflt).toMatchObject({ expires_at: dflt.created_at + 3_600_000, timeout: '1h' });
      clock.advance(400 * 86_400_000);
      await t.server.settled();
      expect((await show(t.api, none.id)).status).toBe('pending');
      expect((await show(t.api, nul.id)).status).toBe('pending');
      expect((await show(t.api, dflt.id)).status).toBe('expired');
    });
  });

  describe('scope', () => {
    const source = { agent: 'claude-code', session: 's-1', repo: 'github.com/acme/app' };

    it.each(['session', 'project', 'always'])('an approval may carry scope %s; it is recorded', async (scope) => {
      t = await startTestServer();
      const r = await createRequest(t.api, {
        title: 'git status',
        kind: 'command',
        source,
        previews: [{ type: 'command', command: { argv: ['git', 'status'] } }],
      });
      const res = await decide(t.api, r, 'approve', { scope });
      expect(res.status, res.text).toBe(200);
      expectValidRequest(res.body);
      expect(res.body.decision.scope).toBe(scope);
      expect((await audit(r.id)).at(-1)!.details).toMatchObject({ scope });
    });

    const refused: Array<[string, Record<string, unknown>, string, Record<string, unknown>]> = [
      ['on a deny', { source }, 'deny', { scope: 'always' }],
      ['session without source.session', { source: { agent: 'a', repo: 'r' } }, 'approve', { scope: 'session' }],
      ['session without source.agent', { source: { session: 's', repo: 'r' } }, 'approve', { scope: 'session' }],
      ['project without source.repo', { source: { agent: 'a', session: 's' } }, 'approve', { scope: 'project' }],
      ['always without source.agent', { source: { session: 's', repo: 'r' }, tool: 'Bash' }, 'approve', { scope: 'always' }],
      [
        'on a question',
        { source, kind: 'question', input: { questions: [{ id: 'q', question: '?', allow_free_text: true }] } },
        'submit',
        { scope: 'always', fields: { answers: { q: { text: 'x' } } } },
      ],
      ['on an info notice', { source, kind: 'info' }, 'ok', { scope: 'always' }],
      ['with edited input', { source, tool: 'Bash' }, 'approve', { scope: 'always', fields: { command: 'git status -s' } }],
      ['of an unknown value', { source }, 'approve', { scope: 'forever' }],
    ];
    it.each(refused)('refuses a scope %s (400 invalid_decision naming scope)', async (_name, body, option, extra) => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'x', ...body });
      expectError(await decide(t.api, r, option, extra), 400, 'invalid_decision', 'scope');
      expect((await show(t.api, r.id)).status).toBe('pending');
    });

    it('scope null is no scope', async () => {
      t = await startTestServer();
      const r = await createRequest(t.api, { title: 'x' });
      const res = await decide(t.api, r, 'deny', { scope: null });
      expect(res.status, res.text).toBe(200);
      expect(res.body.decision.scope).toBeUndefined();
    });
  });

  it("keeps caller-supplied server fields out: id, status, hash, times and decision are the server's", async () => {
    t = await startTestServer();
    const r = await createRequest(t.api, {
      title: 'echo',
      id: 'mine',
      status: 'approved',
      content_hash: 'sha256:abc',
      created_at: 1,
      expires_at: 2,
      decision: { option: 'approve', content_hash: 'x' },
      source: { integration: 'forged', agent: 'a' },
    });
    expect(r.id).not.toBe('mine');
    expect(r).toMatchObject({ status: 'pending', decision: null, expires_at: null, source: { integration: null, agent: 'a' } });
    expect(r.content_hash).not.toBe('sha256:abc');
    expect(r.created_at).toBeGreaterThan(2);
  });

  it('takes a served, decided Request posted back as it was served (its decision with scope and rule_id) as a new request', async () => {
    t = await startTestServer();
    const first = await createRequest(t.api, { title: 'echo me', source: { agent: 'a' } });
    const decided = (await decide(t.api, first, 'approve', { scope: 'always', feedback: 'ok' })).body;
    expect(decided.decision).toMatchObject({ scope: 'always', rule_id: expect.any(String), decided_by: 'admin' });
    const { source, ...served } = decided;
    const again = await t.api.post('/v1/requests', { ...served, source: { ...source, integration: null } });
    expect(again.status, again.text).toBe(201);
    expect(again.body).toMatchObject({ status: 'approved', decision: { decided_by: 'rule' } });
    expect(again.body.id).not.toBe(decided.id);
  });
});

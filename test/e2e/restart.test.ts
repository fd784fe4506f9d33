import Database from 'better-sqlite3';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { spawnDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { expectValidRequest } from '../helpers/upstream-schemas.js';
import { createApiClient, type ApiClient } from '../helpers/test-server.js';

const ADMIN = 'restart-admin-token-0123456789abcdef';

/**
 * The daemon as a real child process on a real SQLite file: decisions acknowledged before a
 * `kill -9` are still there after a restart, deadlines survive restarts, and SIGTERM shuts down
 * gracefully.
 */
describe('restart safety (real child process, kill -9)', { timeout: 120_000 }, () => {
  let dataDir: string;
  let daemon: DaemonProcess | undefined;

  const start = async () => {
    daemon = await spawnDaemon({
      env: {
        COUNTERSIGN_PORT: '0',
        COUNTERSIGN_HOST: '127.0.0.1',
        COUNTERSIGN_DATA_DIR: dataDir,
        COUNTERSIGN_ADMIN_TOKEN: ADMIN,
        COUNTERSIGN_LOG_LEVEL: 'silent',
      },
    });
    return { d: daemon, api: createApiClient(daemon.url, ADMIN) };
  };

  /** Loops the long-poll, as a client must: an answer may still be pending. */
  async function waitDone(api: ApiClient, id: string) {
    for (;;) {
      const r = await api.get(`/v1/requests/${id}/wait?timeout=60s`);
      expect(r.status).toBe(200);
      if (r.body.status !== 'pending') return r.body;
    }
  }

  function integrityCheck() {
    const db = new Database(join(dataDir, 'countersign.db'), { readonly: true });
    try {
      return {
        integrity: db.pragma('integrity_check', { simple: true }),
        requests: (db.prepare('SELECT count(*) AS n FROM requests').get() as { n: number }).n,
      };
    } finally {
      db.close();
    }
  }

  /*
   * One daemon is killed with -9 once, with the state of every scenario in it, and one restart
   * checks them all, then takes the SIGTERM check: two process starts instead of seven. Each
   * `it` below still checks one property, in this order.
   */
  let again: { d: DaemonProcess; api: ApiClient };
  let decided: Array<{ status: number; body: any }>;
  let untouched: any;
  let shortFuse: any;
  let approveOnTimeout: any;
  let justExpire: any;
  let noTimeout: any;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'countersign-restart-'));
    const { d, api } = await start();
    // (a) decided before the kill.
    const created = await Promise.all(['one', 'two', 'three', 'four'].map((title) => api.post('/v1/requests', { title, timeout: '1h' })));
    untouched = (
      await api.post('/v1/requests', { title: 'still pending', kind: 'question', input: { questions: [{ id: 'q', question: 'Why?', allow_free_text: true }] } })
    ).body;
    decided = await Promise.all(
      created.map((c, i) =>
        api.post(`/v1/requests/${c.body.id}/decision`, {
          option: i % 2 ? 'deny' : 'approve',
          content_hash: c.body.content_hash,
          feedback: `reason ${i}`,
        }),
      ),
    );
    for (const r of decided) expect(r.status).toBe(200);
    // (c) deadlines that pass while the daemon is down; (b) one that is still ahead at the restart.
    approveOnTimeout = (await api.post('/v1/requests', { title: 'approve if silent', timeout: '1s', on_timeout: 'approve' })).body;
    justExpire = (await api.post('/v1/requests', { title: 'expire if silent', timeout: '1s', on_timeout: 'expire' })).body;
    noTimeout = (await api.post('/v1/requests', { title: 'waits forever', timeout: null })).body;
    const fuse = await api.post('/v1/requests', { title: 'short fuse', timeout: '4s', on_timeout: 'deny' });
    expect(fuse.status).toBe(201);
    shortFuse = fuse.body;
    await d.kill9();
    expect((await d.exited).signal).toBe('SIGKILL');

    // Stay down until the (c) deadlines have passed.
    const deadline = Math.max(approveOnTimeout.expires_at, justExpire.expires_at);
    await new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now()) + 20));
    again = await start();
  }, 120_000);

  afterAll(async () => {
    if (daemon && daemon.child.exitCode === null && daemon.child.signalCode === null) await daemon.kill9();
    daemon = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('(a) decisions acknowledged with 200 survive kill -9', async () => {
    for (const r of decided) {
      const now = await again.api.get(`/v1/requests/${r.body.id}`);
      expect(now.status).toBe(200);
      expect(now.body).toEqual(r.body);
      expectValidRequest(now.body);
      const audit = await again.api.get(`/v1/requests/${r.body.id}/audit`);
      expect(audit.body.map((a: any) => a.event)).toEqual(['created', 'decided']);
    }
    expect((await again.api.get(`/v1/requests/${untouched.id}`)).body).toEqual(untouched);
    // The restarted daemon still decides the survivor, and the decision is final.
    const late = await again.api.post(`/v1/requests/${decided[0]!.body.id}/decision`, { option: 'deny', content_hash: decided[0]!.body.content_hash });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('not_pending');
  });

  it('(b) a pending request created before kill -9 still expires after the restart', async () => {
    const done = await waitDone(again.api, shortFuse.id);
    expect(done.status).toBe('expired');
    expect(done.decision).toMatchObject({ option: 'deny', outcome: 'deny', decided_by: 'timeout', feedback: null, content_hash: shortFuse.content_hash });
    expect(done.decision.decided_at).toBeGreaterThanOrEqual(shortFuse.expires_at);
    expectValidRequest(done);
    const audit = await again.api.get(`/v1/requests/${shortFuse.id}/audit`);
    expect(audit.body.map((a: any) => [a.event, a.actor])).toEqual([
      ['created', 'admin'],
      ['expired', 'timeout'],
    ]);
  });

  it('(c) a deadline that passes while the daemon is down is expired right after start', async () => {
    const a = (await again.api.get(`/v1/requests/${approveOnTimeout.id}`)).body;
    expect(a.status).toBe('expired');
    expect(a.decision).toMatchObject({ option: 'approve', outcome: 'approve', decided_by: 'timeout' });
    expect(a.decision.decided_at).toBeGreaterThanOrEqual(approveOnTimeout.expires_at);
    const e = (await again.api.get(`/v1/requests/${justExpire.id}`)).body;
    expect(e.status).toBe('expired');
    expect(e.decision).toBeNull();
    expect((await again.api.get(`/v1/requests/${noTimeout.id}`)).body).toEqual(noTimeout);
    for (const r of [a, e]) expectValidRequest(r);
  });

  it('SIGTERM answers an open long-poll with the pending record, closes WebSockets with 1001, exits 0', async () => {
    const { d, api } = again;
    const ws = new WebSocket(`${d.url.replace(/^http/, 'ws')}/v1/events`, { headers: { authorization: `Bearer ${ADMIN}` } });
    await once(ws, 'open');
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    const createdEvent = new Promise<any>((resolve) => ws.on('message', (m) => resolve(JSON.parse(String(m)))));
    const created = (await api.post('/v1/requests', { title: 'left waiting' })).body;
    // The event proves the subscriber is registered before the signal.
    expect((await createdEvent).request.id).toBe(created.id);
    // A bridge's socket too, once its first frame was answered.
    const bridge = new WebSocket(`${d.url.replace(/^http/, 'ws')}/v1/formats/ask/ws`, { headers: { authorization: `Bearer ${ADMIN}` } });
    await once(bridge, 'open');
    const bridgeClosed = new Promise<number>((resolve) => bridge.on('close', (code) => resolve(code)));
    const accepted = once(bridge, 'message');
    bridge.send(
      JSON.stringify({
        method: 'session/event',
        params: { sessionId: 's-1', event: { type: 'approval.required', seq: 1, payload: { id: 'act_1', toolName: 'bash', args: { command: 'ls' } } } },
      }),
    );
    expect(JSON.parse(String((await accepted)[0]))).toMatchObject({ type: 'countersign.accepted' });

    // `Expect: 100-continue` makes Node write "100 Continue" in the same turn that hands the
    // request to the routes; auth and the handler follow without I/O, so once the 100 arrives
    // the long-poll is registered and the signal (a later event-loop turn) finds it open.
    const longPoll = httpRequest(`${d.url}/v1/requests/${created.id}/wait?timeout=60s`, {
      headers: { authorization: `Bearer ${ADMIN}`, expect: '100-continue' },
    });
    const answered = new Promise<{ status: number; body: any }>((resolve, reject) => {
      longPoll.on('response', (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (c: string) => (text += c))
          .on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      });
      longPoll.on('error', reject);
    });
    const continued = once(longPoll, 'continue');
    longPoll.end();
    await continued;

    const exit = await d.stop('SIGTERM');
    const reply = await answered;
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(created);
    expect(await closed).toBe(1001);
    expect(await bridgeClosed).toBe(1001);
    expect(exit).toEqual({ code: 0, signal: null });
    // Every scenario's rows, intact: 5 of (a), 3 of (c), 1 of (b), this one and the bridge's.
    expect(integrityCheck()).toEqual({ integrity: 'ok', requests: 11 });
  });
});

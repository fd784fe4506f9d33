import { afterEach, describe, expect, it } from 'vitest';
import type { Dial } from '../../src/callbacks/safe-dispatcher.js';
import {
  auditOf,
  createWithCallback,
  decideRequest,
  fakeResolver,
  startCallbackServer,
  startReceiver,
  startTrap,
  waitForDeliveries,
  type CallbackServer,
  type Receiver,
} from '../callbacks/callback-kit.js';
import { createFakeClock } from '../helpers/fake-clock.js';

/**
 * The SSRF matrix against the real daemon (docs/callbacks.md). Every case is either refused at
 * create (400 callback_not_allowed, nothing stored) or created and then refused at connect,
 * never dialled: a loopback trap counts connections, and a dial spy stands in wherever the
 * address is not on this machine. Nothing here sends traffic beyond loopback.
 */

function dialSpy(): Dial & { calls: number } {
  const dial = ((_o, _a, cb) => {
    dial.calls++;
    cb(new Error('dial spy: not connecting'), null);
  }) as Dial & { calls: number };
  dial.calls = 0;
  return dial;
}

describe('SSRF defence', () => {
  let t: CallbackServer | undefined;
  let receiver: Receiver | undefined;
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await receiver?.close();
    await t?.close();
    for (const c of cleanups.splice(0)) await c();
    t = receiver = undefined;
  });

  async function trap() {
    const tr = await startTrap();
    cleanups.push(tr.close);
    return tr;
  }

  describe('refused at create', () => {
    const cases: Array<[string, (port: number) => string]> = [
      ['127.0.0.1 when not allowlisted', (p) => `http://127.0.0.1:${p}/hook`],
      ['localhost when not allowlisted', (p) => `http://localhost:${p}/hook`],
      ['[::1] when not allowlisted', (p) => `http://[::1]:${p}/hook`],
      ['0.0.0.0', (p) => `http://0.0.0.0:${p}/hook`],
      ['169.254.169.254 over http', () => 'http://169.254.169.254/latest/meta-data/'],
      ['169.254.169.254 over https', () => 'https://169.254.169.254/latest/meta-data/'],
      ['[::ffff:127.0.0.1]', (p) => `http://[::ffff:127.0.0.1]:${p}/hook`],
      ['decimal IPv4 2130706433', (p) => `http://2130706433:${p}/hook`],
      ['octal IPv4 0177.0.0.1', (p) => `http://0177.0.0.1:${p}/hook`],
      ['10.0.0.1', () => 'https://10.0.0.1/hook'],
      ['192.168.1.1', () => 'https://192.168.1.1/hook'],
      ['credentials', () => 'https://user:pw@hooks.example.com/hook'],
      ['a non-allowlisted host', () => 'https://evil.example.org/hook'],
      ['http:// to a public host', () => 'http://hooks.example.com/hook'],
      ['the apex of a wildcard entry', () => 'https://example.test/hook'],
      ['a fragment', () => 'https://hooks.example.com/hook#x'],
      ['not a URL', () => 'hooks.example.com/hook'],
      ['another scheme', () => 'ftp://hooks.example.com/hook'],
    ];

    it.each(cases)('%s → 400 callback_not_allowed, nothing stored, nothing dialled', async (_name, url) => {
      const tr = await trap();
      t = await startCallbackServer({ callbacks: { allowlist: ['hooks.example.com', '*.example.test'] } });
      const res = await t.api.post('/v1/requests', { title: 'x', callback_url: url(tr.port) });
      expect(res.status, res.text).toBe(400);
      expect(res.body).toMatchObject({ code: 'callback_not_allowed' });
      expect(res.body.error).toContain('callback_url');
      expect((await t.api.get('/v1/requests')).body).toEqual([]);
      expect(tr.connections()).toBe(0);
    });

    it('an empty allowlist (the default) refuses every callback_url', async () => {
      t = await startCallbackServer({ callbacks: { allowlist: [] } });
      const res = await t.api.post('/v1/requests', { title: 'x', callback_url: 'https://hooks.example.com/hook' });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'callback_not_allowed' });
    });
  });

  describe('created, then refused at connect', () => {
    async function expectRefused(id: string) {
      // Wait for the first attempt's outcome, whatever it is, so a wrong outcome fails here.
      const [d] = await waitForDeliveries(t!.api, id, (list) => list[0] !== undefined && list[0].state !== 'leased' && list[0].attempts.length > 0);
      expect(d.state).toBe('failed');
      expect(d.attempts).toHaveLength(1);
      expect(d.attempts[0]).toMatchObject({ status: null, error_class: 'address_not_allowed' });
      const failed = (await auditOf(t!.api, id)).filter((a) => a.event === 'callback.failed');
      expect(failed).toEqual([expect.objectContaining({ actor: 'callbacks', details: expect.objectContaining({ reason: 'address_not_allowed' }) })]);
      return d;
    }

    it('a wildcard-allowlisted hostname whose DNS answer is loopback', async () => {
      const tr = await trap();
      const resolve = fakeResolver({ 'intranet.example.test': ['127.0.0.1'] });
      t = await startCallbackServer({ callbacks: { allowlist: ['*.example.test'] } }, { callbacks: { resolve } });
      const r = await createWithCallback(t.api, `https://intranet.example.test:${tr.port}/hook`);
      await decideRequest(t.api, r);
      const d = await expectRefused(r.id);
      expect(d.attempts[0].error).toContain('127.0.0.1');
      expect(resolve.calls).toContain('intranet.example.test');
      expect(tr.connections()).toBe(0);
    });

    it('a hostname with one private answer among public ones', async () => {
      const dial = dialSpy();
      const resolve = fakeResolver({ 'hooks.example.test': ['93.184.216.34', '192.168.1.1'] });
      t = await startCallbackServer({ callbacks: { allowlist: ['*.example.test'] } }, { callbacks: { resolve, dial } });
      const r = await createWithCallback(t.api, 'https://hooks.example.test/hook');
      await decideRequest(t.api, r);
      await expectRefused(r.id);
      expect(dial.calls).toBe(0);
    });

    it('a hostname whose AAAA answer is IPv4-compatible IPv6 (::127.0.0.1), outside global unicast', async () => {
      const dial = dialSpy();
      const resolve = fakeResolver({ 'v6.example.test': ['::7f00:1'] });
      t = await startCallbackServer({ callbacks: { allowlist: ['*.example.test'] } }, { callbacks: { resolve, dial } });
      const r = await createWithCallback(t.api, 'https://v6.example.test/hook');
      await decideRequest(t.api, r);
      await expectRefused(r.id);
      expect(dial.calls).toBe(0);
    });

    it('169.254.169.254 even when exactly allowlisted', async () => {
      const dial = dialSpy();
      t = await startCallbackServer({ callbacks: { allowlist: ['169.254.169.254'] } }, { callbacks: { dial } });
      const r = await createWithCallback(t.api, 'https://169.254.169.254/latest/meta-data/');
      await decideRequest(t.api, r);
      const d = await expectRefused(r.id);
      expect(d.attempts[0].error).toContain('metadata');
      expect(dial.calls).toBe(0);
    });

    it('fd00:ec2::254 even when exactly allowlisted', async () => {
      const dial = dialSpy();
      t = await startCallbackServer({ callbacks: { allowlist: ['fd00:ec2::254'] } }, { callbacks: { dial } });
      const r = await createWithCallback(t.api, 'https://[fd00:ec2::254]/latest/meta-data/');
      await decideRequest(t.api, r);
      await expectRefused(r.id);
      expect(dial.calls).toBe(0);
    });

    it('0.0.0.0 even when exactly allowlisted', async () => {
      const tr = await trap();
      t = await startCallbackServer({ callbacks: { allowlist: ['0.0.0.0'] } });
      const r = await createWithCallback(t.api, `https://0.0.0.0:${tr.port}/hook`);
      await decideRequest(t.api, r);
      await expectRefused(r.id);
      expect(tr.connections()).toBe(0);
    });

    it('an allowlisted receiver answering 302 to loopback: not followed, the attempt fails', async () => {
      const tr = await trap();
      receiver = await startReceiver(() => ({ status: 302, headers: { location: `http://127.0.0.1:${tr.port}/internal` } }));
      t = await startCallbackServer({}, { clock: createFakeClock(Date.now()) });
      const r = await createWithCallback(t.api, `${receiver.url}/hook`);
      await decideRequest(t.api, r);
      const [d] = await waitForDeliveries(t.api, r.id, (list) => list[0]?.state === 'failed');
      expect(d.attempts).toEqual([expect.objectContaining({ status: 302, error_class: 'http_status' })]);
      expect(receiver.received).toHaveLength(1);
      expect(tr.connections()).toBe(0);
    });
  });
});

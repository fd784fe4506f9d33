import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { BlockedAddressError, createSafeDispatcher, type Dial, type ResolvedAddress } from '../../src/callbacks/safe-dispatcher.js';
import { fakeResolver, startReceiver, startTrap, type Receiver } from './callback-kit.js';

/**
 * The connect step in isolation. A `dial` spy stands in for the socket wherever the address is
 * not on this machine, so no test ever sends traffic beyond loopback; where the address is
 * loopback, the real dial and a listening trap prove that a refused address is never dialled.
 */

interface DialCall {
  hostname: string;
  protocol: string;
  port: string;
  servername: string | undefined;
  addresses: ResolvedAddress[];
}

function dialSpy(): Dial & { calls: DialCall[] } {
  const calls: DialCall[] = [];
  const dial = ((options, addresses, callback) => {
    calls.push({ hostname: options.hostname, protocol: options.protocol, port: options.port, servername: options.servername, addresses });
    callback(new Error('dial spy: not connecting'), null);
  }) as Dial & { calls: DialCall[] };
  dial.calls = calls;
  return dial;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function agentFor(allowlist: string[], extra: Parameters<typeof createSafeDispatcher>[0] extends infer O ? Partial<O> : never = {}) {
  const agent = createSafeDispatcher({ allowlist, timeoutMs: 5_000, resolve: fakeResolver({}), ...extra });
  cleanups.push(() => agent.destroy());
  return agent;
}

async function post(url: string, dispatcher: ReturnType<typeof createSafeDispatcher>) {
  return request(url, { method: 'POST', body: '{}', dispatcher });
}

describe('safe dispatcher: refused before dialling', () => {
  it.each([
    ['literal loopback', (p: number) => `http://127.0.0.1:${p}/`],
    ['decimal IPv4 (WHATWG turns it into 127.0.0.1)', (p: number) => `http://2130706433:${p}/`],
    ['octal IPv4', (p: number) => `http://0177.0.0.1:${p}/`],
    ['hex IPv4', (p: number) => `http://0x7f.1:${p}/`],
    ['IPv4-mapped IPv6 loopback', (p: number) => `http://[::ffff:127.0.0.1]:${p}/`],
    ['0.0.0.0 even when exactly allowlisted', (p: number) => `http://0.0.0.0:${p}/`],
  ])('%s: the loopback trap sees no connection', async (_name, url) => {
    const trap = await startTrap();
    cleanups.push(trap.close);
    const agent = agentFor(['0.0.0.0', '*.example.test']);
    await expect(post(url(trap.port), agent)).rejects.toBeInstanceOf(BlockedAddressError);
    expect(trap.connections()).toBe(0);
  });

  it.each([
    ['https://10.0.0.1/hook', [] as string[]],
    ['https://192.168.1.1/hook', []],
    ['http://[::1]:9/hook', []],
    ['https://169.254.169.254/latest/meta-data/', ['169.254.169.254']],
    ['https://[fd00:ec2::254]/latest/meta-data/', ['fd00:ec2::254']],
    ['https://[::ffff:169.254.169.254]/', ['::ffff:169.254.169.254']],
  ])('%s (allowlist %j): the dial function is never called', async (url, allowlist) => {
    const dial = dialSpy();
    await expect(post(url, agentFor(allowlist, { dial }))).rejects.toBeInstanceOf(BlockedAddressError);
    expect(dial.calls).toEqual([]);
  });

  it('checks every DNS answer: one private answer among public ones refuses the host', async () => {
    const dial = dialSpy();
    const resolve = fakeResolver({ 'mixed.example.test': ['93.184.216.34', '10.0.0.7'] });
    await expect(post('https://mixed.example.test/hook', agentFor(['*.example.test'], { dial, resolve }))).rejects.toThrow(/10\.0\.0\.7/);
    expect(resolve.calls).toEqual(['mixed.example.test']);
    expect(dial.calls).toEqual([]);
  });

  it('a hostname that resolves to loopback is refused unless that exact host is allowlisted', async () => {
    const trap = await startTrap();
    cleanups.push(trap.close);
    const resolve = fakeResolver({ 'rebind.example.test': ['127.0.0.1'] });
    // Allowlisting 127.0.0.1 does not unlock another name that resolves there.
    const agent = agentFor(['*.example.test', '127.0.0.1'], { resolve });
    await expect(post(`http://rebind.example.test:${trap.port}/`, agent)).rejects.toBeInstanceOf(BlockedAddressError);
    expect(trap.connections()).toBe(0);
  });

  it('metadata behind a hostname is refused even for an exactly allowlisted host', async () => {
    const dial = dialSpy();
    const resolve = fakeResolver({ 'meta.internal.test': ['169.254.169.254'] });
    await expect(post('https://meta.internal.test/', agentFor(['meta.internal.test'], { dial, resolve }))).rejects.toThrow(/metadata/);
    expect(dial.calls).toEqual([]);
  });

  it('a DNS failure is reported and nothing is dialled', async () => {
    const dial = dialSpy();
    await expect(post('https://nowhere.example.test/', agentFor(['*.example.test'], { dial }))).rejects.toThrow(/ENOTFOUND/);
    expect(dial.calls).toEqual([]);
  });
});

describe('safe dispatcher: allowed addresses are pinned, the hostname kept', () => {
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  it('a public answer reaches dial with the hostname untouched and only the checked addresses', async () => {
    const dial = dialSpy();
    const resolve = fakeResolver({ 'hooks.example.com': ['93.184.216.34', '2606:4700::1'] });
    await expect(post('https://hooks.example.com/hook', agentFor(['hooks.example.com'], { dial, resolve }))).rejects.toThrow('dial spy');
    expect(dial.calls).toHaveLength(1);
    expect(dial.calls[0]).toMatchObject({ hostname: 'hooks.example.com', protocol: 'https:' });
    // No SNI override: the connector derives it from the hostname (see the TLS test below).
    expect(dial.calls[0]!.servername ?? null).toBeNull();
    expect(dial.calls[0]!.addresses.map((a) => a.address)).toEqual(['93.184.216.34', '2606:4700::1']);
  });

  it('an exactly allowlisted internal host may resolve to a private address', async () => {
    const dial = dialSpy();
    const resolve = fakeResolver({ 'ci.internal.test': ['10.0.0.5'] });
    await expect(post('https://ci.internal.test/hook', agentFor(['ci.internal.test'], { dial, resolve }))).rejects.toThrow('dial spy');
    expect(dial.calls.map((c) => c.addresses)).toEqual([[{ address: '10.0.0.5', family: 4 }]]);
  });

  it('the real dial connects to the checked address via lookup; the Host header keeps the name', async () => {
    receiver = await startReceiver(() => ({ status: 204 }));
    const resolve = fakeResolver({ 'hook.example.test': ['127.0.0.1'] });
    const res = await post(`http://hook.example.test:${receiver.port}/cb`, agentFor(['hook.example.test'], { resolve }));
    expect(res.statusCode).toBe(204);
    await res.body.dump();
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.headers.host).toBe(`hook.example.test:${receiver.port}`);
    expect(resolve.calls).toEqual(['hook.example.test']);
  });

  it('TLS SNI carries the hostname, not the pinned IP', async () => {
    // A plain TCP listener reads the ClientHello (SNI travels in clear) and hangs up.
    const hellos: Buffer[] = [];
    const sockets = new Set<Socket>();
    const server = createTcpServer((s) => {
      sockets.add(s);
      s.once('data', (d: Buffer) => {
        hellos.push(d);
        s.destroy();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          for (const s of sockets) s.destroy();
          server.close(() => r());
        }),
    );
    const port = (server.address() as AddressInfo).port;
    const resolve = fakeResolver({ 'tls-hook.example.test': ['127.0.0.1'] });
    await expect(post(`https://tls-hook.example.test:${port}/cb`, agentFor(['tls-hook.example.test'], { resolve }))).rejects.toThrow();
    expect(hellos).toHaveLength(1);
    expect(hellos[0]![0]).toBe(0x16); // TLS handshake record
    expect(hellos[0]!.includes(Buffer.from('tls-hook.example.test'))).toBe(true);
  });

  it('a literal IP that is exactly allowlisted is dialled directly', async () => {
    receiver = await startReceiver(() => ({ status: 200 }));
    const resolve = fakeResolver({});
    const res = await post(`${receiver.url}/cb`, agentFor(['127.0.0.1'], { resolve }));
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect(resolve.calls).toEqual([]);
  });

  it('redirects are returned, never followed', async () => {
    const trap = await startTrap();
    cleanups.push(trap.close);
    receiver = await startReceiver(() => ({ status: 302, headers: { location: `http://127.0.0.1:${trap.port}/next` } }));
    const res = await post(`${receiver.url}/cb`, agentFor(['127.0.0.1']));
    expect(res.statusCode).toBe(302);
    await res.body.dump();
    expect(trap.connections()).toBe(0);
  });
});

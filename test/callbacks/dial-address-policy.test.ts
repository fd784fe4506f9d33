import { describe, expect, it } from 'vitest';
import { hostExactlyAllowlisted } from '../../src/callbacks/callback-url-policy.js';
import { checkDialAddress } from '../../src/callbacks/dial-address-policy.js';

/** The connect-time address rule (docs/callbacks.md), address by address. */
describe('checkDialAddress', () => {
  const refused = (address: string, host = address, allowlist: string[] = []) => {
    const v = checkDialAddress(address, host, allowlist);
    expect(v.ok, `${address} via ${host} should be refused`).toBe(false);
    return v.ok ? '' : v.reason;
  };
  const allowed = (address: string, host = address, allowlist: string[] = []) => {
    const v = checkDialAddress(address, host, allowlist);
    expect(v, `${address} via ${host}`).toEqual({ ok: true });
  };

  it('allows public unicast IPv4 and IPv6', () => {
    allowed('93.184.216.34', 'hooks.example.com');
    allowed('2606:4700::1', 'hooks.example.com');
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['169.254.1.1', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['198.18.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
  ])('refuses %s (%s) unless exactly allowlisted', (address, range) => {
    expect(refused(address, 'hook.example.test', ['*.example.test'])).toContain(range);
    allowed(address, 'hook.example.test', ['hook.example.test']);
  });

  it('IPv4-mapped IPv6 is judged as the IPv4 address it maps', () => {
    expect(refused('::ffff:127.0.0.1')).toContain('loopback');
    expect(refused('::ffff:7f00:1')).toContain('127.0.0.1');
    expect(refused('::ffff:10.0.0.1')).toContain('private');
    allowed('::ffff:93.184.216.34', 'hooks.example.com');
    // An IP-literal entry matches the same address in either notation.
    allowed('::ffff:7f00:1', '::ffff:7f00:1', ['127.0.0.1']);
  });

  it('cloud metadata is never dialled, even when exactly allowlisted', () => {
    for (const [address, entry] of [
      ['169.254.169.254', '169.254.169.254'],
      ['::ffff:169.254.169.254', '::ffff:169.254.169.254'],
      ['fd00:ec2::254', 'fd00:ec2::254'],
      ['fd00:ec2:0:0:0:0:0:254', 'fd00:ec2::254'],
      ['64:ff9b::a9fe:a9fe', '64:ff9b::a9fe:a9fe'], // NAT64 of 169.254.169.254
      ['2002:a9fe:a9fe::1', '2002:a9fe:a9fe::1'], // 6to4 of 169.254.169.254
    ]) {
      expect(refused(address!, entry!, [entry!])).toContain('metadata');
      expect(refused(address!, 'metadata.example.test', ['metadata.example.test'])).toContain('metadata');
    }
  });

  it('unspecified, broadcast and multicast are never dialled', () => {
    expect(refused('0.0.0.0', '0.0.0.0', ['0.0.0.0'])).toContain('unspecified');
    expect(refused('::', '::', ['::'])).toContain('unspecified');
    expect(refused('255.255.255.255', '255.255.255.255', ['255.255.255.255'])).toContain('broadcast');
    expect(refused('224.0.0.1', '224.0.0.1', ['224.0.0.1'])).toContain('multicast');
  });

  it('a wildcard entry never unlocks a non-public address; one IP never unlocks another', () => {
    refused('10.0.0.5', 'intranet.example.test', ['*.example.test']);
    refused('127.0.0.2', '127.0.0.2', ['127.0.0.1']);
    refused('10.0.0.5', 'other.test', ['intranet.test', '10.0.0.6']);
    // Allowlisting the address does not unlock it for a different hostname that resolves there.
    refused('127.0.0.1', 'rebind.example.test', ['127.0.0.1', '*.example.test']);
  });

  it('IPv6 outside global unicast 2000::/3 is not public (IPv4-compatible, unallocated)', () => {
    expect(refused('::7f00:1', 'hook.example.test', ['*.example.test'])).toContain('reserved');
    refused('::7f00:2');
    expect(refused('4000::1', 'hook.example.test', ['*.example.test'])).toContain('reserved');
    allowed('4000::1', 'hook.example.test', ['hook.example.test']);
    allowed('2a00:1450:4001::1', 'hook.example.test', ['*.example.test']);
    // Metadata hidden in the IPv4-compatible form is still never dialled.
    expect(refused('::a9fe:a9fe', '::a9fe:a9fe', ['::a9fe:a9fe'])).toContain('metadata');
  });

  it('refuses what is not an IP address', () => {
    expect(refused('not-an-ip', 'x')).toContain('not an IP');
  });

  it('hostExactlyAllowlisted: case-insensitive, brackets and IPv6 notation normalised, wildcards ignored', () => {
    expect(hostExactlyAllowlisted('LocalHost', ['localhost'])).toBe(true);
    expect(hostExactlyAllowlisted('[::1]', ['::1'])).toBe(true);
    expect(hostExactlyAllowlisted('::1', ['[0:0:0:0:0:0:0:1]'])).toBe(true);
    expect(hostExactlyAllowlisted('a.example.com', ['*.example.com'])).toBe(false);
    expect(hostExactlyAllowlisted('example.com', ['*.example.com'])).toBe(false);
  });
});

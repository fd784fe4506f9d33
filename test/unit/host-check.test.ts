import { describe, expect, it } from 'vitest';
import { clientKey } from '../../src/auth/auth-throttle.js';
import { allowedHosts, hostOfHeader } from '../../src/http/host-check.js';

const config = (host: string, extra: { public_url?: string; allowed_hosts?: string[] } = {}) => ({
  host,
  public_url: extra.public_url ?? null,
  server: { allowed_hosts: extra.allowed_hosts ?? [] },
});
const allows = (c: ReturnType<typeof config>, header: string) => {
  const h = hostOfHeader(header);
  return h !== undefined && allowedHosts(c).has(h);
};

describe("the daemon's names (Host check)", () => {
  it('bound to 0.0.0.0 (Docker): the wildcard is not a name; localhost and 127.0.0.1 are, so the health check and -p 7470:7470 work', () => {
    const docker = config('0.0.0.0');
    expect(allows(docker, '0.0.0.0:7470')).toBe(false);
    expect(allows(docker, 'localhost:7470')).toBe(true);
    expect(allows(docker, '127.0.0.1:7470')).toBe(true);
    expect(allows(docker, '[::1]:7470')).toBe(true);
    expect(allows(config('::'), '[::]:7470')).toBe(false);
    // A LAN name needs public_url or server.allowed_hosts.
    expect(allows(docker, '192.168.1.20:7470')).toBe(false);
    expect(allows(config('0.0.0.0', { allowed_hosts: ['192.168.1.20'] }), '192.168.1.20:7470')).toBe(true);
  });

  it('a specific bind address is a name; names compare in one canonical form', () => {
    expect(allows(config('10.1.2.3'), '10.1.2.3:7470')).toBe(true);
    expect(allows(config('::1'), '[0:0:0:0:0:0:0:1]:7470')).toBe(true);
    expect(allows(config('127.0.0.1', { public_url: 'https://Approvals.Example.org:8443/' }), 'approvals.example.org')).toBe(true);
    expect(allows(config('127.0.0.1', { allowed_hosts: ['Countersign.LAN'] }), 'countersign.lan:80')).toBe(true);
  });

  it('refuses what is not a plain host[:port]', () => {
    for (const header of ['', 'localhost:7470x', 'user@localhost', 'localhost/x', 'local host', 'localhost:99999', '127.0.0.1.evil.example']) {
      expect(allows(config('127.0.0.1'), header), header).toBe(false);
    }
  });
});

describe('throttle keys', () => {
  it('IPv4 (mapped or not) by address, IPv6 by /64', () => {
    expect(clientKey('203.0.113.9')).toBe('203.0.113.9');
    expect(clientKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe(clientKey('2001:db8:1:2:ffff:ffff:ffff:ffff'));
    expect(clientKey('2001:db8:1:2::1')).not.toBe(clientKey('2001:db8:1:3::1'));
  });
});

import { describe, expect, it } from 'vitest';
import { checkCallbackUrl, hostAllowed } from '../../src/callbacks/callback-url-policy.js';

/** The callback_url rules (docs/callbacks.md), URL by URL (no daemon, no network). */
describe('checkCallbackUrl', () => {
  const ok = (url: string, allowlist: string[]) => expect(() => checkCallbackUrl(url, allowlist), url).not.toThrow();
  const refused = (url: string, allowlist: string[]) => {
    try {
      checkCallbackUrl(url, allowlist);
    } catch (err) {
      expect((err as { code?: string }).code).toBe('callback_not_allowed');
      return (err as Error).message;
    }
    throw new Error(`${url} should be refused with ${JSON.stringify(allowlist)}`);
  };

  it('exact and case-insensitive; *. means subdomains only; an empty allowlist refuses everything', () => {
    ok('https://Hooks.Example.COM/x', ['hooks.example.com']);
    ok('https://hooks.example.com/x', ['HOOKS.example.com']);
    ok('https://a.b.example.com/x', ['*.example.com']);
    refused('https://example.com/x', ['*.example.com']);
    refused('https://badexample.com/x', ['*.example.com']);
    refused('https://hooks.example.com.evil.net/x', ['hooks.example.com']);
    expect(refused('https://hooks.example.com/x', [])).toContain('empty');
  });

  it('https only, except http:// to loopback; no credentials, no fragment', () => {
    ok('http://127.0.0.1:8080/x', ['127.0.0.1']);
    ok('http://localhost:8080/x', ['localhost']);
    ok('http://[::1]:8080/x', ['::1']);
    expect(refused('http://hooks.example.com/x', ['hooks.example.com'])).toContain('https');
    expect(refused('https://u:p@hooks.example.com/x', ['hooks.example.com'])).toContain('credentials');
    expect(refused('https://hooks.example.com/x#', ['hooks.example.com'])).toContain('fragment');
  });

  it('http:// to loopback in IPv4-mapped IPv6 notation is loopback too', () => {
    ok('http://[::ffff:127.0.0.1]:8080/x', ['::ffff:127.0.0.1']);
  });

  it('IP literal entries match in any notation of the same address', () => {
    ok('http://[::1]:8080/x', ['0:0:0:0:0:0:0:1']);
    ok('http://[0:0::1]:8080/x', ['[::1]']);
    refused('http://127.0.0.2:8080/x', ['127.0.0.1']);
  });

  it('internationalised names match their punycode form', () => {
    ok('https://bücher.example/x', ['bücher.example']);
    ok('https://xn--bcher-kva.example/x', ['BÜCHER.example']);
    ok('https://hooks.bücher.example/x', ['*.bücher.example']);
  });

  it('a wildcard entry never matches an IP literal', () => {
    expect(hostAllowed('127.0.0.1', ['*.0.0.1'])).toBe(false);
    refused('http://127.0.0.1:8080/x', ['*.0.0.1']);
  });
});

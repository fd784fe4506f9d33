import ipaddr from 'ipaddr.js';
import { hostExactlyAllowlisted } from './callback-url-policy.js';

/**
 * Which IP addresses a callback may be dialled at (docs/callbacks.md, SSRF defence at connect
 * time). The check runs on the address actually dialled: every DNS answer, or the literal IP.
 *
 * - Public unicast is allowed: ipaddr.js range `unicast`, and for IPv6 only inside the global
 *   unicast block 2000::/3 (IPv4-compatible `::a.b.c.d` and unallocated space are not public).
 * - Cloud metadata (169.254.169.254, fd00:ec2::254, also when embedded in IPv4-mapped,
 *   IPv4-compatible, NAT64 or 6to4 IPv6) is never allowed, even when allowlisted.
 * - Unspecified, broadcast and multicast addresses are never allowed: `0.0.0.0` and `::` reach
 *   the local host on Linux, and the others are not TCP peers.
 * - Any other range (loopback, private, link-local, unique-local, CGNAT, reserved, ...) is
 *   allowed only when the URL's host itself is an exact (non-wildcard) allowlist entry: a
 *   hostname, or an IP literal compared after normalisation. A `*.example.com` entry never
 *   unlocks a non-public address, and allowlisting one IP never unlocks another.
 */
export type DialVerdict = { ok: true } | { ok: false; reason: string };

const METADATA = new Set(['169.254.169.254', ipaddr.parse('fd00:ec2::254').toNormalizedString()]);
const NEVER_RANGES = new Set(['unspecified', 'broadcast', 'multicast']);
// IANA's IPv6 global unicast space; ipaddr.js calls everything it has no name for `unicast`.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

export function checkDialAddress(address: string, host: string, allowlist: readonly string[]): DialVerdict {
  if (!ipaddr.isValid(address)) return { ok: false, reason: `"${address}" is not an IP address` };
  const ip = ipaddr.process(address);
  for (const candidate of [ip, embeddedIpv4(ip)]) {
    if (candidate && METADATA.has(candidate.toNormalizedString())) {
      return { ok: false, reason: `${ip.toString()} is a cloud metadata address and is never dialled` };
    }
  }
  let range = ip.range();
  if (range === 'unicast' && ip.kind() === 'ipv6' && !(ip as ipaddr.IPv6).match(GLOBAL_UNICAST_V6)) range = 'reserved';
  if (range === 'unicast') return { ok: true };
  if (NEVER_RANGES.has(range)) return { ok: false, reason: `${ip.toString()} is a ${range} address and is never dialled` };
  if (hostExactlyAllowlisted(host, allowlist)) return { ok: true };
  return { ok: false, reason: `${ip.toString()} is not a public unicast address (${range}) and host "${host}" is not exactly allowlisted` };
}

/** The IPv4 address inside an IPv4-compatible (::/96), NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address, if any. */
function embeddedIpv4(ip: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | null {
  if (ip.kind() !== 'ipv6') return null;
  const v6 = ip as ipaddr.IPv6;
  const p = v6.parts;
  const pick = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  if (v6.range() === 'rfc6052' || p.slice(0, 6).every((x) => x === 0)) return pick(p[6] ?? 0, p[7] ?? 0);
  if (v6.range() === '6to4') return pick(p[1] ?? 0, p[2] ?? 0);
  return null;
}

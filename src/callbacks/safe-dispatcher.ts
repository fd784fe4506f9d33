import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { checkDialAddress } from './dial-address-policy.js';
import { DELIVERY_SLOTS } from './delivery-slots.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Every address a hostname resolves to (all of them: each one is checked before dialling). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/**
 * Opens the socket once the addresses are checked. `addresses` are the checked answers; the
 * default pins them through `lookup`, so the hostname stays in the URL, the Host header and
 * TLS SNI/certificate checks, while the kernel only ever connects to a checked IP.
 */
export type Dial = (options: buildConnector.Options, addresses: ResolvedAddress[], callback: buildConnector.Callback) => void;

/** The connect step refused the address: never retried (the answer is policy, not luck). */
export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  readonly code = 'COUNTERSIGN_BLOCKED_ADDRESS';
}

/** Node's resolver (getaddrinfo, honours /etc/hosts), asked for every answer in resolver order. */
export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });

export interface SafeConnectorOptions {
  allowlist: readonly string[];
  resolve?: Resolver;
  dial?: Dial;
  /** Connect timeout of the default dial (ms). */
  connectTimeoutMs?: number;
}

/**
 * An undici connector that checks the address actually dialled (docs/callbacks.md): literal IPs
 * (which `net.connect` would dial without calling `lookup`) and every DNS answer go through
 * checkDialAddress before `dial` is called; a refused address never reaches `dial`.
 */
export function createSafeConnector({ allowlist, resolve = systemResolver, dial, connectTimeoutMs = 10_000 }: SafeConnectorOptions): buildConnector.connector {
  const open = dial ?? pinnedDial(connectTimeoutMs);
  return (options, callback) => {
    const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
    const checked = (async () => {
      const family = isIP(host);
      const addresses = family ? [{ address: host, family }] : await resolve(host);
      if (addresses.length === 0) throw new Error(`no address found for ${host}`);
      for (const { address } of addresses) {
        const verdict = checkDialAddress(address, host, allowlist);
        if (!verdict.ok) throw new BlockedAddressError(`refused to connect to ${host}: ${verdict.reason}`);
      }
      return addresses;
    })();
    checked.then(
      (addresses) => open(options, addresses, callback),
      (err: Error) => callback(err, null),
    );
  };
}

/** The default dial: undici's own connector with `lookup` answering only the checked addresses. */
export function pinnedDial(connectTimeoutMs: number): Dial {
  return (options, addresses, callback) => {
    const lookup = ((_hostname, opts, cb) => {
      // Node 20 (autoSelectFamily) asks with {all: true} and expects the array form.
      if (opts.all) (cb as unknown as (err: null, all: ResolvedAddress[]) => void)(null, addresses);
      else cb(null, addresses[0]!.address, addresses[0]!.family);
    }) as LookupFunction;
    buildConnector({ timeout: connectTimeoutMs, lookup, maxCachedSessions: 0 })(options, callback);
  };
}

export interface SafeDispatcherOptions extends SafeConnectorOptions {
  /** Also the headers and body timeouts: a backstop to the per-attempt deadline. */
  timeoutMs: number;
}

/**
 * The undici dispatcher every callback is sent with. It never follows redirects (undici's
 * `request` does not, and no redirect interceptor is composed in); the caller treats 3xx as
 * failure.
 */
export function createSafeDispatcher({ timeoutMs, ...connector }: SafeDispatcherOptions): Agent {
  return new Agent({
    connect: createSafeConnector({ connectTimeoutMs: timeoutMs, ...connector }),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    // As many connections per receiver as the delivery worker may have callbacks in flight: an
    // attempt it started is sent at once, never queued in the agent behind a slow one.
    connections: DELIVERY_SLOTS,
  });
}

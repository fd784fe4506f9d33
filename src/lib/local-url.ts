/**
 * The address this machine reaches a daemon listening on `host`:`port` at: a wildcard bind
 * address (`0.0.0.0`, `::`) is reached on loopback, and IPv6 literals go in brackets.
 */
export function localUrl(host: string, port: number): string {
  if (host === '0.0.0.0' || host === '::') return `http://127.0.0.1:${port}`;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { join, resolve } from 'node:path';
import type { ClientEnv } from '../client-env.js';
import { CliError, usageError } from './cli-error.js';

export const DEFAULT_URL = 'http://127.0.0.1:7470';
export const DEFAULT_DATA_DIR = './data';

export interface ClientSettings {
  url: string;
  token: string;
}

/**
 * Where the daemon is and which token to send. `--url` wins over COUNTERSIGN_URL over this
 * machine at COUNTERSIGN_PORT (the daemon's own setting, so the CLI beside a daemon on another
 * port needs no setup) over the default; `--token` over COUNTERSIGN_TOKEN over COUNTERSIGN_ADMIN_TOKEN over the admin-token
 * file the daemon wrote in its data dir (COUNTERSIGN_DATA_DIR, else ./data), so on the daemon's
 * own machine the CLI works with no setup at all. That file is this machine's daemon's: it is
 * sent only to a URL on this machine, never to another host a `--url` names.
 */
export function resolveClientSettings(
  flags: { url?: string | undefined; token?: string | undefined },
  env: ClientEnv,
  {
    cwd,
    readFile = (p) => readFileSync(p, 'utf8'),
    isThisMachine = isThisMachineHost,
  }: { cwd: string; readFile?: (path: string) => string; isThisMachine?: (host: string) => boolean },
): ClientSettings {
  const url = resolveUrl(flags.url ?? env.url ?? localDaemonUrl(env.port));
  return { url, token: resolveToken(flags.token, env, cwd, readFile, new URL(url).hostname, isThisMachine) };
}

/** Loopback names and addresses, this host's name, and the addresses of its own interfaces. */
export function isThisMachineHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost') || h === hostname().toLowerCase()) return true;
  if (isIP(h) === 4) return h.startsWith('127.') || ownAddresses().includes(h);
  if (isIP(h) === 6) return h === '::1' || ownAddresses().includes(h) || /^::ffff:127\./.test(h);
  return false;
}

function ownAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address.toLowerCase()));
}

/** The daemon on this machine: at COUNTERSIGN_PORT when set, else the default port. */
export function localDaemonUrl(port: string | undefined): string {
  if (port === undefined) return DEFAULT_URL;
  // 0 lets the daemon pick a port, which the CLI cannot guess.
  if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw usageError(`COUNTERSIGN_PORT: "${port}" is not a port the daemon listens on (1 to 65535); set COUNTERSIGN_URL or --url`);
  }
  return `http://127.0.0.1:${Number(port)}`;
}

function resolveUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw usageError(`--url: "${raw}" is not a URL (expected something like ${DEFAULT_URL})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`--url: "${raw}" must be an http:// or https:// URL`);
  return url.href.replace(/\/+$/, '');
}

function resolveToken(
  flag: string | undefined,
  env: ClientEnv,
  cwd: string,
  readFile: (path: string) => string,
  host: string,
  isThisMachine: (host: string) => boolean,
): string {
  if (flag !== undefined) {
    if (!flag.trim()) throw usageError('--token: must not be empty');
    return flag.trim();
  }
  if (env.token) return env.token;
  const file = join(resolve(cwd, env.dataDir ?? DEFAULT_DATA_DIR), 'admin-token');
  // The admin token of the daemon on this machine would approve anything wherever it is sent.
  if (!isThisMachine(host)) {
    throw new CliError('no_token', `no token for ${host}: pass --token or set COUNTERSIGN_TOKEN (${file}, if any, is sent only to a daemon on this machine)`);
  }
  let token = '';
  try {
    token = readFile(file).trim();
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'it does not exist' : (err as Error).message;
    throw new CliError('no_token', `no token: pass --token or set COUNTERSIGN_TOKEN (could not read ${file}: ${reason})`);
  }
  if (!token) throw new CliError('no_token', `no token: pass --token or set COUNTERSIGN_TOKEN (${file} is empty)`);
  return token;
}

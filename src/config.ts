import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { parseDuration } from './durations.js';

/**
 * The whole configuration, validated by one schema. Defaults live in `config/default.json`
 * (not here), an optional file overrides them, and `COUNTERSIGN_<SECTION>_<KEY>` environment
 * variables override both. This is the only module that reads `process.env`.
 */
const duration = z.string().refine((s) => parseDuration(s).ok, { message: 'must be a duration such as 30s, 10m or 2h' });
const durationOrNone = z
  .string()
  .refine((s) => s === 'none' || parseDuration(s).ok, { message: 'must be a duration such as 10m, or "none"' });
// Numbers from the environment arrive as text; only non-blank text is converted, because
// z.coerce would turn an empty variable (null) into 0, a valid port.
const numeric = (n: z.ZodNumber) => z.preprocess((v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v), n);
const port = numeric(z.number().int().min(0).max(65535));
const positiveInt = numeric(z.number().int().positive());
const nonNegativeInt = numeric(z.number().int().min(0));
const httpUrl = z.string().refine(
  (s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
    } catch {
      return false;
    }
  },
  { message: 'must be an absolute http:// or https:// URL, e.g. https://approvals.example.com/' },
);

export const ConfigSchema = z.strictObject({
  host: z.string().min(1),
  port,
  data_dir: z.string().min(1),
  // A short admin token could be guessed (issue 10): `serve` refuses to start with one (exit 4).
  admin_token: z.string().min(16, 'must be at least 16 characters: use a long random secret, e.g. openssl rand -base64 32').nullable(),
  /** Where people reach the inbox (absolute http(s) URL); its host is one of the daemon's names. */
  public_url: httpUrl.nullable(),
  log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  server: z.strictObject({
    // Host names (or IP literals) requests may name besides the built-in ones: the loopback
    // names, the bind address and public_url's host. Anything else is 421 (DNS rebinding).
    allowed_hosts: z.array(z.string().min(1).max(253).refine((h) => !/[\s/@]/.test(h), { message: 'must be a host name or IP literal, without scheme or path' })),
  }),
  requests: z.strictObject({
    default_timeout: durationOrNone,
    max_per_minute: nonNegativeInt,
    max_body_bytes: positiveInt,
  }),
  events: z.strictObject({
    ping_interval: duration,
    max_buffered_bytes: positiveInt,
  }),
  storage: z.strictObject({
    synchronous: z.enum(['full', 'normal']),
  }),
  blobs: z.strictObject({
    // Bytes each submit token may keep stored (the admin has no quota).
    quota_per_token: positiveInt,
    // How long a blob no request names is kept after its last upload.
    retention: duration,
  }),
  callbacks: z.strictObject({
    allowlist: z.array(z.string().min(1)),
    secret: z.string().min(1).nullable(),
    retry_schedule: z.array(duration),
    max_age: duration,
    timeout: duration,
  }),
  formats: z.strictObject({
    roll: z.strictObject({ default_timeout: durationOrNone }),
    alp: z.strictObject({ default_timeout: durationOrNone }),
  }),
  web: z.strictObject({
    session_idle_timeout: duration,
    session_max_age: duration,
  }),
});

export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_CONFIG_FILE = join(packageRoot, 'config', 'default.json');

type Env = Readonly<Record<string, string | undefined>>;

export interface LoadConfigOptions {
  /** `--config` from the command line; falls back to `COUNTERSIGN_CONFIG`. */
  file?: string | undefined;
  env?: Env;
  /** Values that win over everything (used by tests and embedders). */
  overrides?: DeepPartial<Config>;
}

export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K] };

export function loadConfig({ file, env = process.env, overrides }: LoadConfigOptions = {}): Readonly<Config> {
  let merged = readConfigFile(DEFAULT_CONFIG_FILE) as Record<string, unknown>;
  const path = file ?? env.COUNTERSIGN_CONFIG;
  if (path) merged = deepMerge(merged, readConfigFile(path));
  const fromEnv = new Map<string, string>();
  for (const { path: keyPath, envName, isList } of envKeys()) {
    const raw = env[envName];
    if (raw === undefined) continue;
    fromEnv.set(keyPath.join('.'), envName);
    const value = isList ? raw.split(',').map((s) => s.trim()).filter(Boolean) : raw === '' ? null : raw;
    merged = setPath(merged, keyPath, value);
  }
  if (overrides) merged = deepMerge(merged, overrides as Record<string, unknown>);
  const result = ConfigSchema.safeParse(merged);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => {
      const key = issue.path.join('.') || '(root)';
      const via = [...fromEnv].find(([k]) => key === k || key.startsWith(`${k}.`))?.[1];
      return `${key}: ${issue.message}${via ? ` (from ${via})` : ''}`;
    });
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const config = result.data;
  config.data_dir = resolve(config.data_dir);
  return deepFreeze(config);
}

/** Every leaf key with the environment variable that overrides it. */
export function envKeys(): Array<{ path: string[]; envName: string; isList: boolean }> {
  const out: Array<{ path: string[]; envName: string; isList: boolean }> = [];
  const walk = (shape: Record<string, z.ZodType>, prefix: string[]) => {
    for (const [key, schema] of Object.entries(shape)) {
      const path = [...prefix, key];
      if (schema instanceof z.ZodObject) walk(schema.shape as Record<string, z.ZodType>, path);
      else out.push({ path, envName: `COUNTERSIGN_${path.join('_').toUpperCase()}`, isList: schema instanceof z.ZodArray });
    }
  };
  walk(ConfigSchema.shape as unknown as Record<string, z.ZodType>, []);
  return out;
}

/** Settings the CLI client reads (`--url` and `--token` win over these). */
export function clientEnv(env: Env = process.env): { url: string | undefined; token: string | undefined; dataDir: string | undefined } {
  // An empty variable counts as unset, as it does for the daemon's own settings.
  const get = (name: string) => env[name]?.trim() || undefined;
  return { url: get('COUNTERSIGN_URL'), token: get('COUNTERSIGN_TOKEN') ?? get('COUNTERSIGN_ADMIN_TOKEN'), dataDir: get('COUNTERSIGN_DATA_DIR') };
}

function readConfigFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  try {
    const value: unknown = parseYaml(text);
    if (value === null || value === undefined) return {};
    if (typeof value !== 'object' || Array.isArray(value)) throw new Error('the top level must be a mapping');
    return value;
  } catch (err) {
    throw new ConfigError(`cannot parse config file ${path}: ${(err as Error).message}`);
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function deepMerge(base: Record<string, unknown>, over: unknown): Record<string, unknown> {
  if (!isPlainObject(over)) return base;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? deepMerge(out[k] as Record<string, unknown>, v) : v;
  }
  return out;
}

function setPath(obj: Record<string, unknown>, path: string[], value: unknown): Record<string, unknown> {
  const [head, ...rest] = path as [string, ...string[]];
  if (rest.length === 0) return { ...obj, [head]: value };
  const child = isPlainObject(obj[head]) ? (obj[head] as Record<string, unknown>) : {};
  return { ...obj, [head]: setPath(child, rest, value) };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

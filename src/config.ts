import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { DecideHookListSchema } from './decide-hooks/decide-hook-schema.js';
import { parseDuration } from './durations.js';
import { RuleListSchema } from './policy/rule-schema.js';

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

export const ConfigSchema = z.strictObject({
  host: z.string().min(1),
  port,
  data_dir: z.string().min(1),
  // Any non-empty secret is accepted; `serve` warns when it is shorter than 16 characters.
  admin_token: z.string().min(1, 'must not be empty').nullable(),
  log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
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
    // Unset: SQLite in the data dir. A postgres:// URL: PostgreSQL, shared by several daemons.
    url: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .nullable(),
    pool_size: positiveInt,
  }),
  cluster: z.strictObject({
    // A daemon whose heartbeat is three intervals old is gone: its delivery leases are taken over.
    heartbeat_interval: duration,
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
  // Policy (policy.md): rules evaluated first, in file order; decide hooks; scoped-approval lifetime.
  rules: RuleListSchema,
  decide_hooks: DecideHookListSchema,
  policy: z.strictObject({
    session_scope_ttl: duration,
  }),
});

/** Lists of objects are written in the config file only: no environment variable sets them. */
const FILE_ONLY = new Set(['rules', 'decide_hooks']);

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
      if (prefix.length === 0 && FILE_ONLY.has(key)) continue;
      const path = [...prefix, key];
      if (schema instanceof z.ZodObject) walk(schema.shape as Record<string, z.ZodType>, path);
      else out.push({ path, envName: `COUNTERSIGN_${path.join('_').toUpperCase()}`, isList: schema instanceof z.ZodArray });
    }
  };
  walk(ConfigSchema.shape as unknown as Record<string, z.ZodType>, []);
  return out;
}

/**
 * The environment decide hook programs run with: the daemon's own, without any COUNTERSIGN_*
 * variable (they may hold the admin token, the database password or the callback secret).
 */
export function hookEnvironment(env: Env = process.env): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !k.toUpperCase().startsWith('COUNTERSIGN_')));
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

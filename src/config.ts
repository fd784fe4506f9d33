import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { parseDuration } from './durations.js';
import { HookSchema, NotificationsSchema, PublicUrlSchema, type HookConfig } from './notify/hook-config.js';

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
  // Where people reach this daemon (links in notifications); unset: the local inbox URL.
  public_url: PublicUrlSchema,
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
  notifications: NotificationsSchema,
  hooks: z.array(HookSchema),
}).superRefine((c, ctx) => {
  const seen = new Set<string>();
  c.hooks.forEach((h, i) => {
    if (seen.has(h.name)) ctx.addIssue({ code: 'custom', path: ['hooks', i, 'name'], message: `duplicate hook name "${h.name}"` });
    seen.add(h.name);
    // A link must reach this daemon from wherever the notification is read.
    if (h.decision_links && c.notifications.decision_links && !c.public_url) {
      ctx.addIssue({ code: 'custom', path: ['hooks', i, 'decision_links'], message: 'needs public_url (the address people reach this daemon at)' });
    }
  });
});

export type Config = Omit<z.infer<typeof ConfigSchema>, 'hooks'> & { hooks: HookConfig[] };

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
    // An unknown key is named itself (`hooks.0.colour: unknown key`), not as its parent's problem.
    const issues = result.error.issues.flatMap((issue) =>
      issue.code === 'unrecognized_keys' ? issue.keys.map((k) => ({ path: [...issue.path, k], message: 'unknown key' })) : [issue],
    );
    const lines = issues.map((issue) => {
      const key = issue.path.join('.') || '(root)';
      const via = [...fromEnv].find(([k]) => key === k || key.startsWith(`${k}.`))?.[1];
      return `${key}: ${issue.message}${via ? ` (from ${via})` : ''}`;
    });
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const config: Config = result.data;
  config.data_dir = resolve(config.data_dir);
  config.hooks = config.hooks.map((hook, i) => {
    if (!hook.secret_env) return hook;
    // Like callbacks: a hook configured to sign never sends unsigned because a variable is missing.
    const secret = env[hook.secret_env];
    if (!secret) throw new ConfigError(`invalid configuration:\n  hooks.${i}.secret_env: the environment variable ${hook.secret_env} is not set or empty`);
    return { ...hook, secret };
  });
  return deepFreeze(config);
}

/** Every leaf key with the environment variable that overrides it. */
export function envKeys(): Array<{ path: string[]; envName: string; isList: boolean }> {
  const out: Array<{ path: string[]; envName: string; isList: boolean }> = [];
  const walk = (shape: Record<string, z.ZodType>, prefix: string[]) => {
    for (const [key, schema] of Object.entries(shape)) {
      const path = [...prefix, key];
      if (schema instanceof z.ZodObject) walk(schema.shape as Record<string, z.ZodType>, path);
      // Lists of objects (hooks) have no sensible comma-separated form: the config file only.
      else if (schema instanceof z.ZodArray && schema.element instanceof z.ZodObject) continue;
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

/**
 * The environment an `exec` hook program runs with: the daemon's, less its own secrets (every
 * COUNTERSIGN_* variable and each hook's secret_env), so a notification program never sees the
 * admin token or a signing key.
 */
export function hookProgramEnv(config: Readonly<Config>, env: Env = process.env): Record<string, string> {
  const secretNames = new Set(config.hooks.flatMap((h) => (h.secret_env ? [h.secret_env] : [])));
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || k.startsWith('COUNTERSIGN_') || secretNames.has(k)) continue;
    out[k] = v;
  }
  return out;
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

import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { domainToASCII, fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { WireAdapter } from './adapters/adapter.js';
import { adapters as registeredAdapters } from './adapters/registry.js';
import { BEARER_SECRET_CHARS, MIN_BEARER_SECRET_LENGTH } from './auth/secrets.js';
import { signingSecretProblem } from './callbacks/webhook-signature.js';
import { CLIENT_ENV_KEYS, clientEnv } from './client-env.js';
import { decideHookSchemas } from './decide-hooks/decide-hook-schema.js';
import { requestFormats } from './formats/request-formats.js';
import { closestMatch } from './lib/closest-match.js';
import { durationSchema } from './lib/duration-schema.js';
import { hookSchema, NotificationsSchema, PublicUrlSchema, type HookConfig } from './notify/hook-config.js';
import { ruleMatchSchema, ruleSchemas } from './policy/rule-schema.js';
import { parseConnectionUrl, sslModeOf, urlParams } from './storage/postgres-url.js';

// The modes node-postgres reads (libpq's `allow` is not one of them).
const SSL_MODES = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'];

export { clientEnv };

/**
 * The whole configuration, validated by one schema. Defaults live in `config/default.json`
 * (not here; a wire format's own settings, `formats.<format>`, have the defaults its adapter
 * declares), an optional file overrides them, and `COUNTERSIGN_<SECTION>_<KEY>` environment
 * variables override both. This module (and client-env.ts, its half for the CLI client) is the
 * only one that reads `process.env`.
 */
const duration = durationSchema({ example: '30s, 10m or 2h' });
// What a repeating timer runs on: a year would overflow the timer (Node then fires it every millisecond).
const interval = durationSchema({ example: '5s or 1m', max: 3_600_000 });
const durationOrNone = durationSchema({ example: '10m', none: true });
// Numbers from the environment arrive as text; only non-blank text is converted, because
// z.coerce would turn an empty variable (null) into 0, a valid port.
// Only plain decimals: Number() would also read "0x4301" and "1e3", which nobody means as a port.
const numeric = (n: z.ZodNumber) => z.preprocess((v) => (typeof v === 'string' && /^\s*-?[0-9]+(\.[0-9]+)?\s*$/.test(v) ? Number(v) : v), n);
const port = numeric(z.number().int().min(0).max(65535));
const positiveInt = numeric(z.number().int().positive());
const nonNegativeInt = numeric(z.number().int().min(0));

/**
 * A secret clients present as `Authorization: Bearer <secret>`: one header token, so printable
 * ASCII without spaces. A passphrase with spaces (or non-ASCII letters, which arrive as other
 * bytes) would start the daemon and then never authenticate.
 */
const bearerSecret = z
  .string()
  .min(MIN_BEARER_SECRET_LENGTH, `must be at least ${MIN_BEARER_SECRET_LENGTH} characters: use a long random secret, e.g. openssl rand -base64 32`)
  .regex(
    BEARER_SECRET_CHARS,
    'must be printable ASCII without spaces (it is sent as Authorization: Bearer <token>): use a long random secret, e.g. openssl rand -base64 32',
  );

type Adapters = readonly WireAdapter<any, any, any>[];

/** A wire format's settings (`formats.<format>`), as its adapter declares them. */
export interface FormatSettings {
  default_timeout: string;
}

/** `formats`: one section per adapter that declares settings, each key defaulting to the adapter's value. */
function formatsSection(adapters: Adapters) {
  const shape: Record<string, z.ZodType<FormatSettings>> = {};
  for (const a of adapters) {
    if (a.config) shape[a.format] = z.strictObject({ default_timeout: durationOrNone.default(a.config.default_timeout) }).prefault({});
  }
  return z.strictObject(shape).prefault({});
}

/**
 * The schema for a daemon serving these wire formats: `formats` has their settings, and the
 * `format` matchers of rules and hooks take their names.
 */
export function configSchema(adapters: Adapters) {
  const match = ruleMatchSchema(requestFormats(adapters));
  return z
    .strictObject({
      host: z.string().min(1),
      port,
      data_dir: z.string().min(1),
      // A short admin token could be guessed: `serve` refuses to start with one (exit 4).
      admin_token: bearerSecret.nullable(),
      /**
       * Where people reach the inbox (absolute http(s) URL): links in notifications use it, and its
       * host is one of the daemon's names. Stored without a trailing slash.
       */
      public_url: PublicUrlSchema,
      log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
      log: z.strictObject({
        // `auto`: human-readable on a terminal, JSON lines otherwise (a pipe, a file, a container).
        format: z.enum(['auto', 'pretty', 'json']),
      }),
      metrics: z.strictObject({
        // A bearer that reads GET /v1/metrics and nothing else (the admin token always can).
        token: bearerSecret.nullable(),
      }),
      server: z.strictObject({
        // Host names (or IP literals) requests may name besides the built-in ones: the loopback
        // names, the bind address and public_url's host. Anything else is 421 (DNS rebinding).
        // Compared exactly, on any port: an entry with a port or a wildcard would start cleanly
        // and then never match, refusing the very name it was meant to let in.
        allowed_hosts: z.array(
          z
            .string()
            .min(1)
            .max(253)
            .refine((h) => isHostEntry(h, { wildcard: false }), { message: 'must be a host name or IP literal, without scheme, port, path or wildcard' }),
        ),
      }),
      requests: z.strictObject({
        default_timeout: durationOrNone,
        max_per_minute: nonNegativeInt,
        max_body_bytes: positiveInt,
      }),
      events: z.strictObject({
        ping_interval: interval,
        max_buffered_bytes: positiveInt,
      }),
      storage: z.strictObject({
        synchronous: z.enum(['full', 'normal']),
        // Unset: SQLite in the data dir. A postgres:// URL: PostgreSQL, shared by several daemons.
        url: z
          .string()
          .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
          // Read as the driver reads it, so a URL it cannot use is refused here, naming the key.
          .refine(parsesAsConnectionString, 'not a URL the PostgreSQL driver can read (a bad port or host?)')
          // The driver takes an sslmode it does not know as plain TLS, whatever the operator meant.
          .refine(knownSslMode, `sslmode: must be one of ${SSL_MODES.join(', ')}`)
          .refine((url) => !verifyCaWithoutRoot(url), 'sslmode: verify-ca needs sslrootcert (the CA that signed the server certificate)')
          .nullable(),
        pool_size: positiveInt,
      }),
      cluster: z.strictObject({
        // A daemon whose heartbeat is three intervals old is gone: its delivery leases are taken over.
        heartbeat_interval: interval,
      }),
      blobs: z.strictObject({
        // Bytes each submit token may keep stored (the admin has no quota).
        quota_per_token: positiveInt,
        // How long a blob no request names is kept after its last upload.
        retention: duration,
      }),
      callbacks: z.strictObject({
        // Hosts only (docs/callbacks.md): an entry with a scheme, a port or a path would start
        // cleanly and then never match, refusing every callback.
        allowlist: z.array(
          z
            .string()
            .min(1)
            .max(253)
            .refine((h) => isHostEntry(h, { wildcard: true }), { message: 'must be a host: a name, *.name or an IP literal, without scheme, port or path' }),
        ),
        secret: z
          .string()
          .min(1)
          .superRefine((v, ctx) => {
            const problem = signingSecretProblem(v);
            if (problem) ctx.addIssue({ code: 'custom', message: problem });
          })
          .nullable(),
        retry_schedule: z.array(duration),
        max_age: duration,
        timeout: interval,
      }),
      formats: formatsSection(adapters),
      web: z.strictObject({
        session_idle_timeout: duration,
        session_max_age: duration,
      }),
      notifications: NotificationsSchema,
      hooks: z.array(hookSchema(match)),
      // Policy: rules evaluated first, in file order; decide hooks; scoped-approval lifetime.
      rules: ruleSchemas(match).list,
      decide_hooks: decideHookSchemas(match).list,
      policy: z.strictObject({
        session_scope_ttl: duration,
      }),
    })
    .superRefine((c, ctx) => {
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
}

/** The schema of a daemon serving the registry's wire formats. */
export const ConfigSchema = configSchema(registeredAdapters);
type Schema = typeof ConfigSchema;

/** Lists of objects are written in the config file only: no environment variable sets them. */
const FILE_ONLY = new Set(['rules', 'decide_hooks', 'hooks']);

export type Config = Omit<z.infer<typeof ConfigSchema>, 'hooks' | 'formats'> & {
  hooks: HookConfig[];
  formats: Readonly<Record<string, FormatSettings | undefined>>;
};

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
  /** The wire formats the daemon will serve (default: the registry); `formats` and the `format` matchers follow them. */
  adapters?: Adapters;
}

export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K] };

/**
 * config/default.json, with the format settings of the registry's own adapters this daemon
 * serves only: an adapter of an embedder's or a test's declares its own (or none), even under
 * a registry format's name.
 */
function defaultsFor(adapters: Adapters): Record<string, unknown> {
  const defaults = readConfigFile(DEFAULT_CONFIG_FILE) as Record<string, unknown>;
  const formats = (defaults.formats ?? {}) as Record<string, unknown>;
  const served = new Set(adapters.filter((a) => a.config && registeredAdapters.includes(a)).map((a) => a.format));
  return { ...defaults, formats: Object.fromEntries(Object.entries(formats).filter(([name]) => served.has(name))) };
}

export function loadConfig({ file, env = process.env, overrides, adapters = registeredAdapters }: LoadConfigOptions = {}): Readonly<Config> {
  const schema: Schema = adapters === registeredAdapters ? ConfigSchema : configSchema(adapters);
  let merged = defaultsFor(adapters);
  const path = file ?? env.COUNTERSIGN_CONFIG;
  const fromFile = path ? (readConfigFile(path) as Record<string, unknown>) : {};
  merged = deepMerge(merged, fromFile);
  const fromEnv = new Map<string, { envName: string; raw: string }>();
  for (const { path: keyPath, envName, isList } of envKeys(schema)) {
    const raw = env[envName];
    if (raw === undefined) continue;
    fromEnv.set(keyPath.join('.'), { envName, raw });
    // Trimmed, as list items are: a CRLF .env file leaves "\r" at the end of every value.
    const value = isList
      ? raw
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : raw.trim() === ''
        ? null
        : raw.trim();
    merged = setPath(merged, keyPath, value);
  }
  if (overrides) merged = deepMerge(merged, overrides as Record<string, unknown>);
  const lines = unknownVariables(env, schema);
  const result = schema.safeParse(merged);
  if (!result.success) {
    for (const issue of result.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const k of issue.keys) lines.push(unknownKey(schema, issue.path.map(String), k, path));
        continue;
      }
      const key = issue.path.join('.') || '(root)';
      lines.push(`${key}: ${issue.message} (${whatWasWritten(issue.path.map(String), merged, fromEnv, fromFile, path)})`);
    }
  }
  if (lines.length > 0) throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  const config: Config = result.data!;
  config.data_dir = resolve(config.data_dir);
  config.hooks = config.hooks.map((hook, i) => {
    if (!hook.secret_env) return hook;
    // Like callbacks: a hook configured to sign never sends unsigned because a variable is missing.
    const secret = env[hook.secret_env];
    if (!secret) throw new ConfigError(`invalid configuration:\n  hooks.${i}.secret_env: the environment variable ${hook.secret_env} is not set or empty`);
    const problem = signingSecretProblem(secret);
    if (problem) throw new ConfigError(`invalid configuration:\n  hooks.${i}.secret_env: ${problem} (the value of ${hook.secret_env} is not shown)`);
    return { ...hook, secret };
  });
  return deepFreeze(config);
}

/** Secrets are named, never quoted: a config error ends up in logs and terminals. */
const SECRET_KEY = /token|secret/i;

/** `got "70000" from COUNTERSIGN_PORT`, `got 30 from ./countersign.yaml`: the value as the user wrote it. */
function whatWasWritten(
  keyPath: string[],
  merged: Record<string, unknown>,
  fromEnv: Map<string, { envName: string; raw: string }>,
  fromFile: Record<string, unknown>,
  file: string | undefined,
): string {
  const key = keyPath.join('.');
  const envEntry = [...fromEnv].find(([k]) => key === k || key.startsWith(`${k}.`));
  const source = envEntry ? envEntry[1].envName : getPath(fromFile, keyPath) !== undefined ? file : undefined;
  if (SECRET_KEY.test(key)) return source ? `from ${source}; value not shown` : 'value not shown';
  // A whole variable is quoted as typed; one item of a list variable as it was split out.
  const value = envEntry && envEntry[0] === key ? envEntry[1].raw : getPath(merged, keyPath);
  const shown = value === undefined ? 'nothing' : truncate(JSON.stringify(typeof value === 'string' ? withoutPassword(value) : value) ?? String(value));
  return source ? `got ${shown} from ${source}` : `got ${shown}`;
}

// A DNS name in its ASCII form (IDN labels as punycode): dot-separated labels, none empty, none
// starting or ending with "-".
const HOST_NAME = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** A host name or IP literal as a list of hosts takes it (`*.name` too where `wildcard`). */
function isHostEntry(entry: string, { wildcard }: { wildcard: boolean }): boolean {
  if (entry.includes(':')) return isIPv6(entry.replace(/^\[(.*)\]$/, '$1'));
  // `.example.com` or `a..b` would never equal a host; `example.org.` (the fully qualified
  // form) does, as does any IDN name, compared as URLs write it.
  const name = wildcard && entry.startsWith('*.') ? entry.slice(2) : entry;
  // Letters (marks included), digits, "_", "-" and dots only: domainToASCII would cut a path off.
  if (!/^[\p{L}\p{M}\p{N}_.-]+$/u.test(name)) return false;
  const ascii = domainToASCII(name.endsWith('.') ? name.slice(0, -1) : name);
  return ascii !== '' && HOST_NAME.test(ascii);
}

/** libpq's verify-ca checks the certificate against a CA it must be given (as libpq does, pg refuses the URL without one). */
function verifyCaWithoutRoot(url: string): boolean {
  return sslModeOf(url) === 'verify-ca' && !urlParams(url).has('sslrootcert');
}

function knownSslMode(url: string): boolean {
  try {
    const { sslmode } = parseConnectionUrl(url) as { sslmode?: string };
    return sslmode === undefined || SSL_MODES.includes(sslmode);
  } catch {
    return true; // parsesAsConnectionString names that problem
  }
}

function parsesAsConnectionString(url: string): boolean {
  if (verifyCaWithoutRoot(url)) return true; // its own check names that
  try {
    // The driver takes `?port=` from the query too, unchecked: a bad one left the connect hanging.
    const { port } = parseConnectionUrl(url);
    return port == null || port === '' || (/^[0-9]{1,5}$/.test(String(port)) && Number(port) >= 1 && Number(port) <= 65_535);
  } catch {
    return false;
  }
}

/**
 * A URL's password (storage.url: `postgres://user:pass@host/db`) never reaches an error message,
 * however mistyped the URL (`postgres:/user:pass@…`, `user:pass@…`): everything between the
 * user name's `:` and the last `@` is masked.
 */
export function withoutPassword(text: string): string {
  // libpq also takes the password as a query parameter (`?password=…`, `sslpassword=…`).
  text = text.replace(/([?&](?:ssl)?password=)[^&#\s]*/gi, '$1***');
  const at = text.lastIndexOf('@');
  if (at < 0) return text;
  const before = text.slice(0, at);
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/*/.exec(before)?.[0] ?? '';
  const userinfo = before.slice(scheme.length);
  // `scheme://user@host`: no password to hide.
  if (scheme.endsWith('//') && !userinfo.includes(':')) return text;
  const start = before.indexOf(':', userinfo.includes(':') ? scheme.length : 0);
  return start < 0 ? text : `${before.slice(0, start)}:***${text.slice(at)}`;
}

function truncate(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** `requests.default_timeot: unknown key (did you mean requests.default_timeout?)`. */
function unknownKey(schema: Schema, parent: string[], key: string, file: string | undefined): string {
  const full = [...parent, key].join('.');
  const siblings = Object.keys(shapeAt(schema, parent));
  const guess = closestMatch(key, siblings);
  const elsewhere = guess
    ? []
    : envKeys(schema)
        .filter((k) => k.path.at(-1) === key)
        .map((k) => k.path.join('.'));
  const hint = guess ? ` (did you mean ${[...parent, guess].join('.')}?)` : elsewhere.length ? ` (${key} belongs under ${elsewhere.join(' or ')})` : '';
  return `${full}: unknown key${file ? ` in ${file}` : ''}${hint}`;
}

/**
 * COUNTERSIGN_* variables nobody reads: a misspelt one would silently leave its setting at the
 * default, so it is an error naming the closest known variable. Known: one per config key (from
 * the schema, so new keys count at once), the CLI's own, and COUNTERSIGN_CONFIG.
 */
function unknownVariables(env: Env, schema: Schema): string[] {
  const known = [...envKeys(schema).map((k) => k.envName), ...CLIENT_ENV_KEYS, 'COUNTERSIGN_CONFIG'];
  const prefix = 'COUNTERSIGN_';
  return Object.keys(env)
    .filter((name) => name.startsWith(prefix) && !known.includes(name))
    .sort()
    .map((name) => {
      const guess = closestMatch(
        name.slice(prefix.length),
        known.map((k) => k.slice(prefix.length)),
      );
      return `${name}: unknown environment variable${guess ? ` (did you mean ${prefix}${guess}?)` : ''}`;
    });
}

/** A section's object schema, when `schema` is one (a section may have defaults of its own). */
function sectionOf(schema: z.ZodType): z.ZodObject | null {
  const inner = schema instanceof z.ZodPrefault ? (schema.unwrap() as z.ZodType) : schema;
  return inner instanceof z.ZodObject ? inner : null;
}

/** The object schema's keys at `path` (empty when the path is not a section). */
function shapeAt(root: Schema, path: string[]): Record<string, z.ZodType> {
  let section = sectionOf(root);
  for (const part of path) {
    const next = (section?.shape as Record<string, z.ZodType> | undefined)?.[part];
    section = next ? sectionOf(next) : null;
  }
  return (section?.shape as Record<string, z.ZodType> | undefined) ?? {};
}

function getPath(obj: unknown, path: string[]): unknown {
  let cur = obj;
  for (const part of path) {
    if (typeof cur !== 'object' || cur === null || !Object.hasOwn(cur, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/**
 * Every leaf key with the environment variable that overrides it (`-` in a format's name is `_`
 * there: `COUNTERSIGN_FORMATS_ROLL_DEFAULT_TIMEOUT`).
 */
export function envKeys(schema: Schema = ConfigSchema): Array<{ path: string[]; envName: string; isList: boolean }> {
  const out: Array<{ path: string[]; envName: string; isList: boolean }> = [];
  const walk = (shape: Record<string, z.ZodType>, prefix: string[]) => {
    for (const [key, child] of Object.entries(shape)) {
      if (prefix.length === 0 && FILE_ONLY.has(key)) continue;
      const path = [...prefix, key];
      const section = sectionOf(child);
      if (section) walk(section.shape as Record<string, z.ZodType>, path);
      else out.push({ path, envName: `COUNTERSIGN_${path.join('_').toUpperCase().replace(/-/g, '_')}`, isList: child instanceof z.ZodArray });
    }
  };
  walk(schema.shape as unknown as Record<string, z.ZodType>, []);
  return out;
}

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

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, ConfigSchema, DEFAULT_CONFIG_FILE, envKeys, loadConfig } from '../../src/config.js';
import { adapters } from '../../src/adapters/registry.js';
import { allowedHosts, hostOfHeader } from '../../src/http/host-check.js';
import { scrubForLog } from '../../src/lib/logger.js';

describe('config', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function configError(fn: () => unknown): string {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error('expected a ConfigError');
  }

  it('the shipped defaults validate and match the spec', () => {
    const defaults = JSON.parse(readFileSync(DEFAULT_CONFIG_FILE, 'utf8'));
    expect(ConfigSchema.safeParse(defaults).success).toBe(true);
    const c = loadConfig({ env: {} });
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 7470,
      admin_token: null,
      requests: { default_timeout: 'none', max_per_minute: 120, max_body_bytes: 1024 * 1024 },
      events: { ping_interval: '25s' },
      storage: { synchronous: 'full' },
      public_url: null,
      server: { allowed_hosts: [] },
      blobs: { quota_per_token: 256 * 1024 * 1024, retention: '7d' },
      callbacks: { allowlist: [], secret: null, max_age: '24h', retry_schedule: ['5s', '30s', '2m', '10m', '30m', '1h', '2h', '4h', '8h'] },
    });
    expect(c.data_dir).toBe(resolve('./data'));
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.callbacks.allowlist)).toBe(true);
  });

  it("lists each wire format's settings as its adapter declares them, and leaves out formats a daemon does not serve", () => {
    const defaults = JSON.parse(readFileSync(DEFAULT_CONFIG_FILE, 'utf8'));
    const declared = Object.fromEntries(adapters.filter((a) => a.config).map((a) => [a.format, { default_timeout: a.config!.default_timeout }]));
    expect(defaults.formats).toEqual(declared);
    expect(defaults.formats).toEqual({ roll: { default_timeout: '5m' }, alp: { default_timeout: '30m' } });
    expect(loadConfig({ env: {} }).formats).toEqual(declared);
    // Wired with the handup adapter only: no formats.roll to set, and no error for it.
    const handupOnly = adapters.filter((a) => a.format === 'handup');
    expect(loadConfig({ env: {}, adapters: handupOnly }).formats).toEqual({});
    // An adapter of its own under a registry format's name: its declaration, or no settings at all.
    const roll = adapters.find((a) => a.format === 'roll')!;
    expect(loadConfig({ env: {}, adapters: [...handupOnly, { ...roll, config: { default_timeout: '1h' } }] }).formats).toEqual({
      roll: { default_timeout: '1h' },
    });
    expect(loadConfig({ env: {}, adapters: [...handupOnly, { ...roll, config: undefined }] }).formats).toEqual({});
  });

  it('every key has a COUNTERSIGN_<SECTION>_<KEY> variable, including the ones the spec names', () => {
    const names = envKeys().map((k) => k.envName);
    for (const n of [
      'COUNTERSIGN_HOST',
      'COUNTERSIGN_PORT',
      'COUNTERSIGN_DATA_DIR',
      'COUNTERSIGN_ADMIN_TOKEN',
      'COUNTERSIGN_LOG_LEVEL',
      'COUNTERSIGN_REQUESTS_DEFAULT_TIMEOUT',
      'COUNTERSIGN_REQUESTS_MAX_PER_MINUTE',
      'COUNTERSIGN_EVENTS_PING_INTERVAL',
      'COUNTERSIGN_CALLBACKS_ALLOWLIST',
      'COUNTERSIGN_CALLBACKS_SECRET',
      'COUNTERSIGN_CALLBACKS_RETRY_SCHEDULE',
      'COUNTERSIGN_PUBLIC_URL',
      'COUNTERSIGN_SERVER_ALLOWED_HOSTS',
      'COUNTERSIGN_BLOBS_QUOTA_PER_TOKEN',
      'COUNTERSIGN_BLOBS_RETENTION',
    ]) {
      expect(names).toContain(n);
    }
  });

  it('environment variables override the defaults; lists are comma-separated', () => {
    const c = loadConfig({
      env: {
        COUNTERSIGN_PORT: '8080',
        COUNTERSIGN_HOST: '0.0.0.0',
        COUNTERSIGN_DATA_DIR: dir,
        COUNTERSIGN_ADMIN_TOKEN: 'a-very-long-admin-token',
        COUNTERSIGN_REQUESTS_DEFAULT_TIMEOUT: '15m',
        COUNTERSIGN_REQUESTS_MAX_PER_MINUTE: '0',
        COUNTERSIGN_CALLBACKS_ALLOWLIST: 'hooks.example.com, *.ci.example.org,,127.0.0.1',
        COUNTERSIGN_CALLBACKS_RETRY_SCHEDULE: '1s,2s',
        COUNTERSIGN_CALLBACKS_SECRET: 'whsec',
        COUNTERSIGN_LOG_LEVEL: 'debug',
        COUNTERSIGN_STORAGE_SYNCHRONOUS: 'normal',
        COUNTERSIGN_FORMATS_ROLL_DEFAULT_TIMEOUT: 'none',
        COUNTERSIGN_PUBLIC_URL: 'https://approvals.example.org/',
        COUNTERSIGN_SERVER_ALLOWED_HOSTS: 'countersign.lan, 192.168.1.20',
        COUNTERSIGN_BLOBS_QUOTA_PER_TOKEN: '1048576',
        COUNTERSIGN_BLOBS_RETENTION: '1d',
      },
    });
    expect(c).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      data_dir: dir,
      admin_token: 'a-very-long-admin-token',
      requests: { default_timeout: '15m', max_per_minute: 0 },
      callbacks: { allowlist: ['hooks.example.com', '*.ci.example.org', '127.0.0.1'], retry_schedule: ['1s', '2s'], secret: 'whsec' },
      log_level: 'debug',
      storage: { synchronous: 'normal' },
      formats: { roll: { default_timeout: 'none' } },
      // Kept without its trailing slash: links are built as <public_url>/d/…
      public_url: 'https://approvals.example.org',
      server: { allowed_hosts: ['countersign.lan', '192.168.1.20'] },
      blobs: { quota_per_token: 1048576, retention: '1d' },
    });
  });

  it('an empty variable clears a nullable setting', () => {
    const file = join(dir, 'c.yaml');
    writeFileSync(file, 'admin_token: from-the-file-0123456789\n');
    expect(loadConfig({ file, env: {} }).admin_token).toBe('from-the-file-0123456789');
    expect(loadConfig({ file, env: { COUNTERSIGN_ADMIN_TOKEN: '' } }).admin_token).toBeNull();
  });

  it('a config file (YAML) overrides the defaults, env overrides the file, COUNTERSIGN_CONFIG names it', () => {
    const file = join(dir, 'countersign.yaml');
    writeFileSync(file, 'port: 9000\nrequests:\n  default_timeout: 1h\ncallbacks:\n  allowlist: [a.example.com]\n');
    const fromFile = loadConfig({ file, env: {} });
    expect(fromFile.port).toBe(9000);
    expect(fromFile.requests).toMatchObject({ default_timeout: '1h', max_per_minute: 120 });
    expect(fromFile.callbacks.allowlist).toEqual(['a.example.com']);
    expect(loadConfig({ env: { COUNTERSIGN_CONFIG: file } }).port).toBe(9000);
    expect(loadConfig({ file, env: { COUNTERSIGN_PORT: '9001' } }).port).toBe(9001);
  });

  it.each([
    ['COUNTERSIGN_PORT', 'abc', 'port'],
    ['COUNTERSIGN_PORT', '70000', 'port'],
    ['COUNTERSIGN_PORT', '', 'port'],
    ['COUNTERSIGN_PORT', '80.5', 'port'],
    ['COUNTERSIGN_PORT', '0x4301', 'port'],
    ['COUNTERSIGN_PORT', '1e3', 'port'],
    ['COUNTERSIGN_REQUESTS_MAX_PER_MINUTE', '0b11', 'requests.max_per_minute'],
    ['COUNTERSIGN_CLUSTER_HEARTBEAT_INTERVAL', '30d', 'cluster.heartbeat_interval'],
    ['COUNTERSIGN_EVENTS_PING_INTERVAL', '2h', 'events.ping_interval'],
    // Node's timers cannot wait past 24.8 days: a longer limit would fire at once.
    ['COUNTERSIGN_CALLBACKS_TIMEOUT', '30d', 'callbacks.timeout'],
    ['COUNTERSIGN_REQUESTS_DEFAULT_TIMEOUT', '30', 'requests.default_timeout'],
    ['COUNTERSIGN_REQUESTS_DEFAULT_TIMEOUT', '2y', 'requests.default_timeout'],
    ['COUNTERSIGN_REQUESTS_MAX_PER_MINUTE', '-1', 'requests.max_per_minute'],
    ['COUNTERSIGN_REQUESTS_MAX_BODY_BYTES', '', 'requests.max_body_bytes'],
    ['COUNTERSIGN_REQUESTS_MAX_BODY_BYTES', '0', 'requests.max_body_bytes'],
    ['COUNTERSIGN_EVENTS_PING_INTERVAL', 'fast', 'events.ping_interval'],
    ['COUNTERSIGN_CALLBACKS_RETRY_SCHEDULE', '5s,soon', 'callbacks.retry_schedule'],
    ['COUNTERSIGN_LOG_LEVEL', 'loud', 'log_level'],
    ['COUNTERSIGN_STORAGE_SYNCHRONOUS', 'off', 'storage.synchronous'],
    ['COUNTERSIGN_HOST', '', 'host'],
    ['COUNTERSIGN_ADMIN_TOKEN', 'hunter2', 'admin_token'],
    ['COUNTERSIGN_ADMIN_TOKEN', '0123456789abcde', 'admin_token'],
    ['COUNTERSIGN_PUBLIC_URL', 'approvals.example.org', 'public_url'],
    ['COUNTERSIGN_PUBLIC_URL', 'ftp://approvals.example.org/', 'public_url'],
    // The inbox is served from the root: a proxy under a path cannot serve it.
    ['COUNTERSIGN_PUBLIC_URL', 'https://example.org/countersign/', 'public_url'],
    ['COUNTERSIGN_SERVER_ALLOWED_HOSTS', 'https://countersign.lan/', 'server.allowed_hosts'],
    // Host headers are compared without their port, and exactly: these would never match.
    ['COUNTERSIGN_SERVER_ALLOWED_HOSTS', 'countersign.lan:8443', 'server.allowed_hosts'],
    ['COUNTERSIGN_SERVER_ALLOWED_HOSTS', '[fd00::5]:7470', 'server.allowed_hosts'],
    ['COUNTERSIGN_SERVER_ALLOWED_HOSTS', '*.countersign.lan', 'server.allowed_hosts'],
    ['COUNTERSIGN_BLOBS_QUOTA_PER_TOKEN', '0', 'blobs.quota_per_token'],
    ['COUNTERSIGN_BLOBS_RETENTION', 'forever', 'blobs.retention'],
    ['COUNTERSIGN_LOG_FORMAT', 'text', 'log.format'],
    ['COUNTERSIGN_METRICS_TOKEN', 'short-secret', 'metrics.token'],
    // Sent as Authorization: Bearer <token>, which takes one token of printable ASCII.
    ['COUNTERSIGN_ADMIN_TOKEN', 'correct horse battery staple', 'admin_token'],
    ['COUNTERSIGN_ADMIN_TOKEN', 'pässwört-0123456789abcdef', 'admin_token'],
    ['COUNTERSIGN_METRICS_TOKEN', 'scrape\ttoken-0123456789', 'metrics.token'],
  ])('%s=%j is a ConfigError naming %s and the variable', (name, value, key) => {
    const message = configError(() => loadConfig({ env: { [name]: value } }));
    expect(message).toContain(key);
    expect(message).toContain(name);
  });

  it('log.format defaults to auto and metrics.token to none; a short metrics token is refused without being shown', () => {
    expect(loadConfig({ env: {} })).toMatchObject({ log: { format: 'auto' }, metrics: { token: null } });
    expect(loadConfig({ env: { COUNTERSIGN_LOG_FORMAT: 'json', COUNTERSIGN_METRICS_TOKEN: 'scrape-token-0123456789' } })).toMatchObject({
      log: { format: 'json' },
      metrics: { token: 'scrape-token-0123456789' },
    });
    const message = configError(() => loadConfig({ env: { COUNTERSIGN_METRICS_TOKEN: 'short-secret' } }));
    expect(message).toContain('metrics.token: must be at least 16 characters');
    expect(message).toContain('from COUNTERSIGN_METRICS_TOKEN; value not shown');
    expect(message).not.toContain('short-secret');
  });

  it('server.allowed_hosts takes names and IP literals, each then let in on any port', () => {
    const hosts = ['countersign.lan', '192.168.1.20', '[fd00::5]', 'fd00::6', 'bücher.example', 'approvals.example.org.'];
    const c = loadConfig({ env: { COUNTERSIGN_SERVER_ALLOWED_HOSTS: hosts.join(',') } });
    expect(c.server.allowed_hosts).toEqual(hosts);
    const names = allowedHosts(c);
    for (const header of ['countersign.lan:8443', '192.168.1.20', '[fd00::5]:7470', '[fd00::6]', 'xn--bcher-kva.example:80', 'approvals.example.org.'])
      expect(names.has(hostOfHeader(header)!), header).toBe(true);
  });

  it('an admin token with a space is refused at start, without being shown: no Authorization header could carry it', () => {
    const message = configError(() => loadConfig({ env: { COUNTERSIGN_ADMIN_TOKEN: 'correct horse battery staple' } }));
    expect(message).toContain('admin_token: must be printable ASCII without spaces');
    expect(message).not.toContain('horse');
    // Every character a base64, hex or URL-safe secret uses is fine.
    expect(loadConfig({ env: { COUNTERSIGN_ADMIN_TOKEN: 'Ab0+/=_-.~!#$%&*^|abcdef' } }).admin_token).toBe('Ab0+/=_-.~!#$%&*^|abcdef');
  });

  it('a bad value in a file names the key; unknown keys and bad YAML are errors', () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'requests:\n  default_timeout: 30\n');
    expect(configError(() => loadConfig({ file: bad, env: {} }))).toContain('requests.default_timeout');
    writeFileSync(bad, 'requests:\n  default_timeot: 30s\n');
    expect(configError(() => loadConfig({ file: bad, env: {} }))).toContain('default_timeot');
    writeFileSync(bad, 'port: [1\n');
    expect(configError(() => loadConfig({ file: bad, env: {} }))).toContain(bad);
    expect(configError(() => loadConfig({ file: join(dir, 'missing.yaml'), env: {} }))).toContain('missing.yaml');
  });

  it('a misspelt COUNTERSIGN_* variable is an error naming the closest known one', () => {
    const cases: Array<[string, string]> = [
      ['COUNTERSIGN_REQUESTS_DEFAULT_TIMEOT', 'COUNTERSIGN_REQUESTS_DEFAULT_TIMEOUT'],
      ['COUNTERSIGN_PROT', 'COUNTERSIGN_PORT'],
      ['COUNTERSIGN_CALLBACK_ALLOWLIST', 'COUNTERSIGN_CALLBACKS_ALLOWLIST'],
      ['COUNTERSIGN_TOKNE', 'COUNTERSIGN_TOKEN'],
    ];
    for (const [name, meant] of cases) {
      const message = configError(() => loadConfig({ env: { [name]: '1' } }));
      expect(message).toContain(`${name}: unknown environment variable (did you mean ${meant}?)`);
    }
    // Nothing close: still an error, without a misleading guess.
    expect(configError(() => loadConfig({ env: { COUNTERSIGN_SOMETHING_ELSE_ENTIRELY: 'x' } }))).toMatch(
      /COUNTERSIGN_SOMETHING_ELSE_ENTIRELY: unknown environment variable$/m,
    );
  });

  it('every variable of the schema, the CLI client variables and COUNTERSIGN_CONFIG are known', () => {
    for (const { envName } of envKeys()) {
      let message = '';
      try {
        loadConfig({ env: { [envName]: 'not valid for anything \u0000' } });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, envName).not.toContain('unknown environment variable');
    }
    const file = join(dir, 'c.yaml');
    writeFileSync(file, 'port: 9100\n');
    const c = loadConfig({
      env: {
        COUNTERSIGN_URL: 'http://127.0.0.1:1',
        COUNTERSIGN_TOKEN: 't',
        COUNTERSIGN_ADMIN_TOKEN: 'an-admin-token-long-enough',
        COUNTERSIGN_DATA_DIR: dir,
        COUNTERSIGN_CONFIG: file,
      },
    });
    expect(c.port).toBe(9100);
  });

  it('errors quote the value the user wrote and where, but never a secret', () => {
    expect(configError(() => loadConfig({ env: { COUNTERSIGN_PORT: 'abc' } }))).toContain('port: ');
    expect(configError(() => loadConfig({ env: { COUNTERSIGN_PORT: 'abc' } }))).toContain('(got "abc" from COUNTERSIGN_PORT)');
    expect(configError(() => loadConfig({ env: { COUNTERSIGN_CALLBACKS_RETRY_SCHEDULE: '5s,soon' } }))).toContain(
      'got "soon" from COUNTERSIGN_CALLBACKS_RETRY_SCHEDULE',
    );
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'requests:\n  default_timeout: 30\nlog_level: loud\ncallbacks:\n  secret: [sekrit-value]\n');
    const message = configError(() => loadConfig({ file, env: {} }));
    expect(message).toMatch(new RegExp(`requests\\.default_timeout: .*\\(got 30 from ${file}\\)`));
    expect(message).toContain(`log_level: `);
    expect(message).toContain(`(got "loud" from ${file})`);
    expect(message).toContain(`callbacks.secret: `);
    expect(message).toContain(`from ${file}; value not shown`);
    expect(message).not.toContain('sekrit-value');
  });

  it('variables are read trimmed (a CRLF .env file leaves "\\r" at the end of each), durations in the file too', () => {
    const c = loadConfig({
      env: {
        COUNTERSIGN_CALLBACKS_TIMEOUT: '10s\r',
        COUNTERSIGN_REQUESTS_DEFAULT_TIMEOUT: ' 30m ',
        COUNTERSIGN_NOTIFICATIONS_REMIND_EVERY: 'none\r',
        COUNTERSIGN_NOTIFICATIONS_EXPIRING_BEFORE: '5m\r',
        COUNTERSIGN_NOTIFICATIONS_BURST_WINDOW: '1m\r',
        COUNTERSIGN_NOTIFICATIONS_DECISION_LINKS: 'false\r',
        COUNTERSIGN_LOG_LEVEL: 'info\r',
        COUNTERSIGN_ADMIN_TOKEN: 'a-long-enough-admin-token-0123456789\r',
      },
    });
    expect(c.log_level).toBe('info');
    expect(c.admin_token).toBe('a-long-enough-admin-token-0123456789');
    expect(c.notifications.decision_links).toBe(false);
    expect(c.callbacks.timeout).toBe('10s');
    expect(c.requests.default_timeout).toBe('30m');
    expect(c.notifications).toMatchObject({ remind_every: 'none', expiring_before: '5m', burst: { window: '1m' } });
  });

  it('callbacks.allowlist takes hosts only: a URL or a host:port would start and never match', () => {
    // IDN labels (with combining marks too) and the fully qualified form match URLs' hosts as written.
    const hosts = ['hooks.example.com', '*.ci.example.org', '127.0.0.1', '[::1]', '::1', 'LOCALHOST', 'bücher.example', 'हिन्दी.भारत', 'example.org.'];
    expect(loadConfig({ env: {}, overrides: { callbacks: { allowlist: hosts } } as never }).callbacks.allowlist).toEqual(hosts);
    for (const entry of [
      'http://127.0.0.1:8080',
      '127.0.0.1:8080',
      'hooks.example.com/path',
      'user@hooks.example.com',
      'a*.example.com',
      ' example.com',
      '.example.com',
      'example.org..',
      'a..b',
      '-bad-.com',
      '*.',
    ]) {
      const message = configError(() => loadConfig({ env: {}, overrides: { callbacks: { allowlist: ['ok.example', entry] } } as never }));
      expect(message, entry).toContain('callbacks.allowlist.1: must be a host');
    }
  });

  it('a whsec_ signing secret must carry standard, padded base64 (the receivers refuse anything else), and is never shown', () => {
    expect(loadConfig({ env: { COUNTERSIGN_CALLBACKS_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } }).callbacks.secret).toBe(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    );
    expect(loadConfig({ env: { COUNTERSIGN_CALLBACKS_SECRET: 'a plain shared secret' } }).callbacks.secret).toBe('a plain shared secret');
    for (const bad of ['whsec_!!!notbase64', 'whsec_YQ', 'whsec_', 'whsec_YWJj ZA==']) {
      const message = configError(() => loadConfig({ env: { COUNTERSIGN_CALLBACKS_SECRET: bad } }));
      expect(message, bad).toContain('callbacks.secret: a whsec_ secret must carry its key bytes as standard base64, padded');
      if (bad.length > 6) expect(message).not.toContain(bad.slice(6));
    }
  });

  it('storage.url: a postgres:// URL or unset (SQLite); an error never shows its password', async () => {
    expect(loadConfig({ env: {} }).storage).toEqual({ synchronous: 'full', url: null, pool_size: 10 });
    expect(loadConfig({ env: { COUNTERSIGN_STORAGE_URL: 'postgresql://cs:pw@db:5432/cs' } }).storage.url).toBe('postgresql://cs:pw@db:5432/cs');
    const message = configError(() => loadConfig({ env: { COUNTERSIGN_STORAGE_URL: 'mysql://cs:hunter2-secret@db/cs' } }));
    expect(message).toContain('storage.url: must be a postgres:// or postgresql:// URL');
    expect(message).toContain('(got "mysql://cs:***@db/cs" from COUNTERSIGN_STORAGE_URL)');
    expect(message).not.toContain('hunter2');
    expect(configError(() => loadConfig({ env: { COUNTERSIGN_STORAGE_POOL_SIZE: '0' } }))).toContain('storage.pool_size');
    // Mistyped URLs keep the password hidden too.
    for (const [typed, shown] of [
      ['postgres:/cs:hunter2-secret@db/cs', 'postgres:/cs:***@db/cs'],
      ['cs:hunter2-secret@db:5432/cs', 'cs:***@db:5432/cs'],
      ['postgres//cs:hunter2-secret@db/cs', 'postgres//cs:***@db/cs'],
    ]) {
      const typo = configError(() => loadConfig({ env: { COUNTERSIGN_STORAGE_URL: typed } }));
      expect(typo).toContain(`(got "${shown}" from COUNTERSIGN_STORAGE_URL)`);
      expect(typo).not.toContain('hunter2');
    }
    // A URL the driver cannot read is refused here, naming the key, not at connect time.
    for (const typed of [
      'postgres://cs:hunter2-secret@db:abc/cs',
      'postgres://cs:hunter2-secret@db:99999/cs',
      'postgres://cs:hunter2-secret@[bad',
      'postgres://cs:hunter2-secret@db/cs?port=abc',
      'postgres://cs:hunter2-secret@db/cs?port=99999',
    ]) {
      const bad = configError(() => loadConfig({ env: { COUNTERSIGN_STORAGE_URL: typed } }));
      expect(bad).toContain('storage.url: not a URL the PostgreSQL driver can read');
      expect(bad).not.toContain('hunter2');
    }
    // An sslmode the driver does not read is refused, naming the modes; the ones it reads pass.
    const ssl = configError(() => loadConfig({ env: { COUNTERSIGN_STORAGE_URL: 'postgres://cs:hunter2-secret@db/cs?sslmode=bogus' } }));
    expect(ssl).toContain('storage.url: sslmode: must be one of disable, prefer, require, verify-ca, verify-full, no-verify');
    expect(ssl).not.toContain('hunter2');
    // Read as libpq reads them: no warning from the driver that they mean verify-full.
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      for (const mode of ['disable', 'prefer', 'require', 'verify-full']) {
        expect(loadConfig({ env: { COUNTERSIGN_STORAGE_URL: `postgres://cs@db/cs?sslmode=${mode}` } }).storage.url).toContain(mode);
      }
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((m) => m.includes('sslmode') || m.includes('SSL modes'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
    expect(configError(() => loadConfig({ env: { COUNTERSIGN_STORAGE_URL: 'postgres://cs@db/cs?sslmode=verify-ca' } }))).toContain(
      'storage.url: sslmode: verify-ca needs sslrootcert',
    );
    // libpq's password parameter is a password too, in the message and in the log.
    const query = configError(() => loadConfig({ env: { COUNTERSIGN_STORAGE_URL: 'postgres://cs@db:54x/cs?sslmode=require&password=hunter2-secret' } }));
    expect(query).toContain('(got "postgres://cs@db:54x/cs?sslmode=require&password=***" from COUNTERSIGN_STORAGE_URL)');
    expect(scrubForLog('connect postgres://cs@db/cs?password=hunter2-secret&sslpassword=also-secret failed')).toBe(
      'connect postgres://cs@db/cs?password=***&sslpassword=*** failed',
    );
    expect(loadConfig({ env: { COUNTERSIGN_STORAGE_URL: 'postgres://cs@db/cs?port=6543' } }).storage.url).toBe('postgres://cs@db/cs?port=6543');
    expect(loadConfig({ env: { COUNTERSIGN_STORAGE_URL: 'postgresql://cs@/var/run/postgresql/cs' } }).storage.url).toBe(
      'postgresql://cs@/var/run/postgresql/cs',
    );
  });

  it('an unknown key in the file names the closest key, or the section it belongs to', () => {
    const file = join(dir, 'typo.yaml');
    writeFileSync(file, 'requests:\n  default_timeot: 30s\n');
    expect(configError(() => loadConfig({ file, env: {} }))).toContain(
      `requests.default_timeot: unknown key in ${file} (did you mean requests.default_timeout?)`,
    );
    writeFileSync(file, 'request:\n  default_timeout: 30s\n');
    expect(configError(() => loadConfig({ file, env: {} }))).toContain('request: unknown key in ' + file + ' (did you mean requests?)');
    writeFileSync(file, 'requests:\n  ping_interval: 30s\n');
    expect(configError(() => loadConfig({ file, env: {} }))).toContain(
      'requests.ping_interval: unknown key in ' + file + ' (ping_interval belongs under events.ping_interval)',
    );
  });
});

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { logDestination, type LogOutput } from '../../src/lib/log-destination.js';
import { createLogger } from '../../src/lib/logger.js';
import { spawnDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { createApiClient } from '../helpers/test-server.js';

/**
 * The real binary (`countersign serve`) as a child process: stdout carries log lines only (all
 * JSON unless log.format is pretty), the banner is on stderr, and the admin token is printed
 * only by the start that generated it.
 */

const VERSION = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')).version as string;
const stdoutLines = (d: DaemonProcess) =>
  d
    .stdout()
    .split('\n')
    .filter((l) => l !== '');

describe('countersign serve: what goes to stdout and stderr', { timeout: 60_000 }, () => {
  const dirs: string[] = [];
  const running: DaemonProcess[] = [];
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'countersign-output-'));
    dirs.push(d);
    return d;
  };
  afterEach(async () => {
    for (const d of running.splice(0)) if (d.child.exitCode === null && d.child.signalCode === null) await d.stop();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const start = async (env: Record<string, string>) => {
    const d = await spawnDaemon({ env: { COUNTERSIGN_PORT: '0', ...env } });
    running.push(d);
    return d;
  };

  it('stdout is JSON lines only; the banner is on stderr; the generated admin token is printed once, by the start that made it', async () => {
    const dataDir = tempDir();
    const first = await start({ COUNTERSIGN_DATA_DIR: dataDir, COUNTERSIGN_LOG_LEVEL: 'debug' });
    const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    expect(first.stderr()).toBe(
      `countersign ${VERSION} listening on ${first.url}\ninbox: ${first.url}/\nadmin token (shown once; also in ${dataDir}/admin-token): ${token}\n`,
    );
    const api = createApiClient(first.url, token);
    const created = await api.post('/v1/requests', { title: 'Deploy', source: { agent: 'codex' } });
    expect(created.status).toBe(201);
    expect((await api.get('/v1/requests', { token: 'wrong-token-0123456789' })).status).toBe(401);
    await first.outputMatching(/"request created"/);
    expect(await first.stop()).toMatchObject({ code: 0 });

    const lines = stdoutLines(first);
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed.find((l) => l.msg === 'request created')).toMatchObject({ request_id: created.body.id, agent: 'codex', actor: 'admin' });
    expect(parsed.filter((l) => l.msg === 'request completed').map((l) => l.status)).toEqual(expect.arrayContaining([201, 401]));
    expect(first.stdout()).not.toContain(token);
    expect(first.stdout()).not.toContain('listening on');

    // The token is in its file now: the next start prints no token at all.
    const second = await start({ COUNTERSIGN_DATA_DIR: dataDir, COUNTERSIGN_LOG_LEVEL: 'debug' });
    expect(second.stderr()).toBe(`countersign ${VERSION} listening on ${second.url}\ninbox: ${second.url}/\n`);
    await second.stop();
    expect(second.output()).not.toContain(token);
  });

  it('a configured admin token is never printed', async () => {
    const token = 'configured-admin-token-0123456789';
    const d = await start({ COUNTERSIGN_DATA_DIR: tempDir(), COUNTERSIGN_ADMIN_TOKEN: token, COUNTERSIGN_LOG_LEVEL: 'debug' });
    expect((await createApiClient(d.url, token).get('/v1/requests')).status).toBe(200);
    await d.stop();
    expect(d.output()).not.toContain(token);
    expect(d.stderr()).not.toContain('admin token');
  });

  it('log.format pretty: readable lines on stdout, no JSON, no colour into a pipe', async () => {
    const token = 'configured-admin-token-0123456789';
    const d = await start({ COUNTERSIGN_DATA_DIR: tempDir(), COUNTERSIGN_ADMIN_TOKEN: token, COUNTERSIGN_LOG_FORMAT: 'pretty' });
    const created = await createApiClient(d.url, token).post('/v1/requests', { title: 'Deploy', source: { agent: 'codex' } });
    expect(created.status).toBe(201);
    await d.outputMatching(/request created/);
    await d.stop();
    const line = stdoutLines(d).find((l) => l.includes('request created'))!;
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: request created/);
    expect(d.stdout()).toContain(`request_id: "${created.body.id}"`);
    for (const l of stdoutLines(d)) expect(l.startsWith('{'), l).toBe(false);
    expect(d.stdout()).not.toContain('\u001b[');
  });

  it('an unknown log.format stops it with exit 4 naming the key', async () => {
    const d = spawnDaemon({ env: { COUNTERSIGN_PORT: '0', COUNTERSIGN_DATA_DIR: tempDir(), COUNTERSIGN_LOG_FORMAT: 'yaml' } });
    await expect(d).rejects.toThrow(/log\.format: .*\(got "yaml" from COUNTERSIGN_LOG_FORMAT\)/);
  });
});

describe('logDestination', () => {
  /** A stream standing in for stdout, terminal or not, that collects what is written. */
  function output(isTTY: boolean) {
    let text = '';
    let notify: (() => void) | null = null;
    const stream = new Writable({
      write(chunk, _enc, done) {
        text += String(chunk);
        notify?.();
        done();
      },
    }) as Writable & LogOutput;
    stream.isTTY = isTTY;
    return {
      stream,
      /** Resolves with everything written once a line has arrived (pretty output is written a turn later). */
      next: () => new Promise<string>((resolve) => (text.includes('\n') ? resolve(text) : (notify = () => text.includes('\n') && resolve(text)))),
    };
  }

  it.each([
    ['auto', true, 'pretty'],
    ['auto', false, 'json'],
    ['pretty', false, 'pretty'],
    ['json', true, 'json'],
  ] as const)('%s on a %s terminal writes %s', async (format, tty, expected) => {
    const out = output(tty);
    createLogger('info', logDestination(format, out.stream)).info({ request_id: 'r1', token: 'csa_secret-value-0123456789' }, 'request created');
    const text = await out.next();
    if (expected === 'json') expect(JSON.parse(text)).toMatchObject({ msg: 'request created', request_id: 'r1', token: '[redacted]' });
    else {
      expect(text).toMatch(/INFO.*: request created\n {4}request_id: "r1"\n {4}token: "\[redacted\]"\n$/);
      expect(() => JSON.parse(text)).toThrow();
    }
    expect(text).not.toContain('secret-value');
  });
});

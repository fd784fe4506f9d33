import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Issue 10, item 8: at log level trace, fastify logged `err.rawPacket` of malformed requests,
 * the raw bytes with the Authorization and Cookie headers, as a byte array. Secrets must not
 * reach the log in any encoding.
 */

/** Collects every log line written. */
function captureLog() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { stream, text: () => lines.join('') };
}

/** Every way the secret could appear: text, bytes as a JSON array, base64, base64url, hex. */
function encodings(secret: string): string[] {
  const bytes = Buffer.from(secret);
  return [secret, [...bytes].join(','), bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex'), encodeURIComponent(secret)];
}

function expectNoSecret(log: string, secret: string) {
  for (const form of encodings(secret)) expect(log, `the log holds the secret as ${form.slice(0, 40)}`).not.toContain(form);
}

describe('logs never hold secrets', () => {
  let t: TestServer;
  afterEach(async () => t?.close());

  it('a malformed request at level trace logs its error code only, not the raw packet with its headers', async () => {
    const log = captureLog();
    t = await startTestServer({}, { log: createLogger('trace', log.stream) });
    const cookieSecret = 'cookie-secret-value-9f8e7d6c5b4a';
    const socket = connect(Number(new URL(t.url).port), '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8').on('data', (d: string) => (answer += d));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(
      `POST /v1/requests HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t.adminToken}\r\nCookie: countersign_session=${cookieSecret}\r\nContent-Length: abc\r\n\r\n{}`,
    );
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect(answer).toContain('"code":"invalid_request"');
    const text = log.text();
    expect(text).toContain('HPE_');
    expectNoSecret(text, t.adminToken);
    expectNoSecret(text, cookieSecret);
    expect(text).not.toContain('rawPacket');
  });

  it('the logger redacts secrets wherever they sit: headers, nested errors, byte buffers, bearer strings', () => {
    const log = captureLog();
    const logger = createLogger('trace', log.stream);
    const secret = 'cst_Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg';
    const err = Object.assign(new Error(`request failed for Bearer ${secret}`), {
      rawPacket: Buffer.from(`GET / HTTP/1.1\r\nAuthorization: Bearer ${secret}\r\n\r\n`),
      cause: { headers: { Authorization: `Bearer ${secret}`, 'x-countersign-session': secret } },
    });
    logger.error({ err }, 'failed');
    logger.info({ req: { headers: { authorization: `Bearer ${secret}`, cookie: `countersign_session=${secret}` } } }, 'request');
    logger.warn({ payload: new Uint8Array(Buffer.from(secret)), nested: [{ token: secret }, { data: Buffer.from(secret) }] }, 'bytes');
    logger.debug(`a message quoting Bearer ${secret}`);
    logger.error(new Error(`an error quoting ${secret}`));
    logger.info({ tokenId: '01KDXB5M000000000000000000', token_name: 'ci-bot' }, 'ids and names of tokens are not secrets');
    const text = log.text();
    expect(text.split('\n').filter(Boolean)).toHaveLength(6);
    expect(text).toContain('"tokenId":"01KDXB5M000000000000000000"');
    expectNoSecret(text, secret);
    // What is not secret is still there.
    expect(text).toContain('request failed for Bearer [redacted]');
  });

  it('the password in a URL (storage.url, a webhook with credentials) is masked in messages and fields', () => {
    const log = captureLog();
    const logger = createLogger('info', log.stream);
    const password = 'pg-password-7c1e9a2b';
    logger.warn({ err: new Error(`connect failed: postgres://countersign:${password}@db.internal:5432/approvals`) }, 'storage');
    logger.info({ target: `https://bot:${password}@hooks.example.com/in` }, `posting to https://bot:${password}@hooks.example.com/in`);
    const text = log.text();
    expectNoSecret(text, password);
    expect(text).toContain('postgres://countersign:***@db.internal:5432/approvals');
    expect(text).toContain('https://bot:***@hooks.example.com/in');
  });
});

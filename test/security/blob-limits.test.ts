import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeClock } from '../helpers/fake-clock.js';
import { createRequest, expectError } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Issue 10, item 6: blob uploads count in the token's rate limit, stream instead of buffering
 * whole, stay within a per-token quota (413 past it), and are deleted once no request names them
 * and the retention period has passed.
 */

const MiB = 1024 * 1024;
const hashOf = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

describe('blob uploads are bounded', () => {
  let t: TestServer;
  afterEach(async () => t?.close());

  const upload = (token: string, bytes: Buffer) =>
    t.api.request('POST', '/v1/blobs', undefined, { token, raw: bytes, headers: { 'content-type': 'application/octet-stream' } });
  const download = (hash: string) => fetch(`${t.url}/v1/blobs/${hash}`, { headers: { authorization: `Bearer ${t.adminToken}` } });
  const count = (table: string) => t.count(table);

  it("uploads count in the token's per-minute rate limit, shared with creates", async () => {
    const clock = createFakeClock();
    t = await startTestServer({ requests: { max_per_minute: 3 } }, { clock });
    const bot = await t.submitClient('bot');
    expect((await upload(bot.token, randomBytes(10))).status).toBe(201);
    expect((await upload(bot.token, randomBytes(10))).status).toBe(201);
    expect((await bot.api.post('/v1/requests', { title: 'x' })).status).toBe(201);
    expectError(await upload(bot.token, randomBytes(10)), 429, 'rate_limited', 'bot');
    expectError(await bot.api.post('/v1/requests', { title: 'y' }), 429, 'rate_limited');
    expect(await count('blobs')).toBe(2);
    clock.advance(60_000);
    expect((await upload(bot.token, randomBytes(10))).status).toBe(201);
  });

  it('a token past blobs.quota_per_token gets 413 quota_exceeded and nothing is stored; other tokens and the admin are not affected', async () => {
    t = await startTestServer({ blobs: { quota_per_token: 1 * MiB } });
    const bot = await t.submitClient('bot');
    const first = randomBytes(400 * 1024);
    expect((await upload(bot.token, first)).status).toBe(201);
    // The same bytes again are stored once and counted once.
    expect((await upload(bot.token, first)).text).toBe(hashOf(first));
    expect((await upload(bot.token, randomBytes(500 * 1024))).status).toBe(201);
    const over = await upload(bot.token, randomBytes(200 * 1024));
    expectError(over, 413, 'quota_exceeded', 'blobs.quota_per_token');
    expect(await count('blobs')).toBe(2);
    const other = await t.submitClient('other');
    expect((await upload(other.token, randomBytes(600 * 1024))).status).toBe(201);
    expect((await upload(t.adminToken, randomBytes(2 * MiB))).status).toBe(201);
  });

  it('a token at its quota may upload its own bytes again (they count once, and their retention restarts), never new ones', async () => {
    t = await startTestServer({ blobs: { quota_per_token: 100 } });
    const bot = await t.submitClient('bot');
    const mine = randomBytes(60);
    expect((await upload(bot.token, mine)).status).toBe(201);
    // Past the room left (40 bytes), but the same bytes: kept, counted once.
    const again = await upload(bot.token, mine);
    expect(again.status, again.text).toBe(201);
    expect(again.text).toBe(hashOf(mine));
    // New bytes past the room are refused, however they compare to what the token stores.
    expectError(await upload(bot.token, randomBytes(60)), 413, 'quota_exceeded', 'blobs.quota_per_token');
    expectError(await upload(bot.token, randomBytes(50)), 413, 'quota_exceeded', 'blobs.quota_per_token');
    expectError(await upload(bot.token, randomBytes(70)), 413, 'quota_exceeded', 'blobs.quota_per_token');
    expect(await count('blobs')).toBe(1);
    expect(await count('blob_chunks')).toBe(1);
    expect(await count('blob_owners')).toBe(1);
    // Bytes another token stored are new to this one: they count against its quota.
    const others = randomBytes(60);
    expect((await upload(t.adminToken, others)).status).toBe(201);
    const owners = await count('blob_owners');
    expectError(await upload(bot.token, others), 413, 'quota_exceeded');
    expect(await count('blob_owners')).toBe(owners);
    expect(await count('blob_chunks')).toBe(2);
    // Within the room, anything goes.
    expect((await upload(bot.token, randomBytes(40))).status).toBe(201);
  });

  it('one upload at a time may run past the room: another is refused at its first bytes, so little is staged', async () => {
    t = await startTestServer({ blobs: { quota_per_token: 100 } });
    const bot = await t.submitClient('bot');
    const mine = randomBytes(60);
    expect((await upload(bot.token, mine)).status).toBe(201);
    const open = () => {
      const req = httpRequest(new URL('/v1/blobs', t.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${bot.token}`, 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' },
      });
      const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
        req.once('response', async (res) => {
          let text = '';
          for await (const chunk of res) text += chunk;
          resolve({ status: res.statusCode!, text });
        });
        req.once('error', reject);
      });
      return { req, answered };
    };
    const first = open();
    first.req.write(mine.subarray(0, 50));
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The first is past the room (40 bytes left) and still open: a second one past it is refused now.
    const second = open();
    second.req.write(randomBytes(50));
    const refused = await second.answered;
    expect(refused.status).toBe(413);
    expect(JSON.parse(refused.text).code).toBe('quota_exceeded');
    second.req.destroy();
    // The first turns out to be the token's own blob: kept.
    first.req.end(mine.subarray(50));
    expect(await first.answered).toEqual({ status: 201, text: hashOf(mine) });
    expect(await count('blobs')).toBe(1);
    expect(await count('blob_chunks')).toBe(1);
  });

  it('streams: an upload is refused as soon as it passes the quota, while the client is still sending', async () => {
    t = await startTestServer({ blobs: { quota_per_token: 2 * MiB } });
    const bot = await t.submitClient('bot');
    const url = new URL('/v1/blobs', t.url);
    // No content-length: the server cannot know the size before reading.
    const req = httpRequest(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${bot.token}`, 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' },
    });
    const answered = new Promise<IncomingMessage>((resolve, reject) => {
      req.once('response', resolve);
      req.once('error', reject);
    });
    for (let i = 0; i < 3; i++) req.write(randomBytes(MiB));
    // The request is not ended: only a server that reads as it goes can answer now.
    const res = await answered;
    expect(res.statusCode).toBe(413);
    let text = '';
    for await (const chunk of res) text += chunk;
    expect(JSON.parse(text)).toMatchObject({ code: 'quota_exceeded' });
    req.destroy();
    expect(await count('blobs')).toBe(0);
    expect(await count('blob_chunks')).toBe(0);
  });

  it('a declared content-length past the quota or the blob limit is refused before the body is read', async () => {
    t = await startTestServer({ blobs: { quota_per_token: 2 * MiB } });
    const bot = await t.submitClient('bot');
    for (const [size, code] of [
      [3 * MiB, 'quota_exceeded'],
      [16 * MiB + 1, 'payload_too_large'],
    ] as const) {
      const req = httpRequest(new URL('/v1/blobs', t.url), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${size > 16 * MiB ? t.adminToken : bot.token}`,
          'content-type': 'application/octet-stream',
          'content-length': String(size),
        },
      });
      const answered = new Promise<IncomingMessage>((resolve, reject) => {
        req.once('response', resolve);
        req.once('error', reject);
      });
      req.flushHeaders();
      const res = await answered;
      expect(res.statusCode).toBe(413);
      let text = '';
      for await (const chunk of res) text += chunk;
      expect(JSON.parse(text).code).toBe(code);
      req.destroy();
    }
  });

  it('a large upload is stored in chunks and downloads byte for byte', async () => {
    t = await startTestServer();
    const bytes = randomBytes(5 * MiB + 123);
    const res = await upload(t.adminToken, bytes);
    expect(res.status, res.text).toBe(201);
    expect(res.text).toBe(hashOf(bytes));
    expect(await count('blob_chunks')).toBeGreaterThan(1);
    const down = await download(res.text);
    expect(down.status).toBe(200);
    expect(down.headers.get('content-length')).toBe(String(bytes.length));
    expect(Buffer.from(await down.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('blobs no request names are deleted after blobs.retention; named ones stay; the quota is freed', async () => {
    const clock = createFakeClock();
    t = await startTestServer({ blobs: { retention: '7d', quota_per_token: 1 * MiB } }, { clock });
    const bot = await t.submitClient('bot');
    const orphan = randomBytes(700 * 1024);
    const shown = randomBytes(100);
    const inFiles = randomBytes(100);
    const attached = randomBytes(100);
    const [o, s, f, a] = await Promise.all([orphan, shown, inFiles, attached].map(async (b) => (await upload(bot.token, b)).text));
    await createRequest(bot.api, {
      title: 'see files',
      previews: [
        { type: 'image', blob: s },
        { type: 'files', files: [{ path: 'a.txt', blob: f, mime: 'text/plain', size: 100 }] },
        { type: 'email', email: { subject: 'x', attachments: [{ name: 'a.bin', blob: a }] } },
      ],
    });
    expectError(await upload(bot.token, randomBytes(400 * 1024)), 413, 'quota_exceeded');

    clock.advance(7 * 86_400_000 - 1);
    expect((await download(o!)).status).toBe(200);
    clock.advance(1);
    await expect.poll(async () => (await download(o!)).status).toBe(404);
    for (const kept of [s, f, a]) expect((await download(kept!)).status).toBe(200);
    expect(await count('blob_chunks')).toBe(3);
    // The orphan no longer counts against the token.
    expect((await upload(bot.token, randomBytes(400 * 1024))).status).toBe(201);
  });

  it('the sweep keeps one timer armed, for the next blob that can expire', async () => {
    const clock = createFakeClock();
    t = await startTestServer({ blobs: { retention: '1h' } }, { clock });
    const timers = () => clock.pending();
    const idle = timers();
    const b = (await upload(t.adminToken, randomBytes(10))).text;
    clock.advance(30 * 60_000);
    const c = (await upload(t.adminToken, randomBytes(10))).text;
    expect(timers()).toBe(idle);
    clock.advance(30 * 60_000);
    await expect.poll(async () => (await download(b)).status).toBe(404);
    expect((await download(c)).status).toBe(200);
    clock.advance(30 * 60_000);
    await expect.poll(async () => (await download(c)).status).toBe(404);
    expect(timers()).toBe(idle);
  });
});

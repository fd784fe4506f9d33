// The benchmark scenarios. Each drives a server already running and returns raw figures; run.mjs
// prints them with their ratio to the baseline.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { Agent, request as undiciRequest } from 'undici';
import WebSocket from 'ws';
import { summarize } from './stats.mjs';

const agent = new Agent({ connections: 512, pipelining: 1, keepAliveTimeout: 65_000 });

export async function http(url, method, body, headers = {}) {
  const res = await undiciRequest(url, {
    method,
    dispatcher: agent,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}

/**
 * Scenario 1 bodies: half reuse one of 50 pending dedupe keys (same content), half are new. With
 * `pooled: false` every body is new (every request writes a record, as a fresh native frame does).
 */
export function submitBodyFactory({ pooled = true } = {}) {
  let n = 0;
  return () => {
    n++;
    const pool = pooled && n % 2 === 0;
    const slot = (n / 2) % 50;
    const key = pool ? `pool-${slot}` : `uniq-${n}-${randomUUID()}`;
    return {
      title: pool ? `Deploy service ${slot}` : `Run migration ${n}`,
      summary: 'Benchmark request',
      kind: 'command',
      risk: 'low',
      dedupe_key: key,
      source: { agent: 'bench', session: 'bench-session' },
      previews: [{ type: 'command', command: { shell: 'echo hello' } }],
    };
  };
}

/** autocannon at `connections` with a fresh body per request. */
export function submitLoad({ url, path = '/v1/requests', headers = {}, duration, connections = 100, makeBody }) {
  return new Promise((resolve, reject) => {
    const inst = autocannon(
      {
        url,
        connections,
        duration,
        pipelining: 1,
        warmup: { connections, duration: 2 },
        requests: [
          {
            method: 'POST',
            path,
            headers: { 'content-type': 'application/json', ...headers },
            setupRequest: (req) => ({ ...req, body: JSON.stringify(makeBody()) }),
          },
        ],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    autocannon.track(inst, { renderProgressBar: false, renderResultsTable: false, renderLatencyTable: false });
  });
}

export function cannonFigures(r) {
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts, non2xx: r.non2xx, total: r.requests.total };
}

async function openSockets(wsUrl, count, headers, onMessage) {
  const sockets = [];
  const batch = 100;
  for (let i = 0; i < count; i += batch) {
    await Promise.all(
      Array.from(
        { length: Math.min(batch, count - i) },
        () =>
          new Promise((resolve, reject) => {
            const ws = new WebSocket(wsUrl, { headers, perMessageDeflate: false });
            ws.on('open', () => resolve());
            ws.on('error', reject);
            ws.on('message', (data) => onMessage(data.toString()));
            sockets.push(ws);
          }),
      ),
    );
  }
  return sockets;
}

// The id of the request in an event message, without parsing 1,000 copies of the JSON.
function messageRequestId(text) {
  const at = text.indexOf('"request":{"id":"');
  return at < 0 ? null : text.slice(at + 17, text.indexOf('"', at + 17));
}

async function inBatches(items, size, fn) {
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return out;
}

/**
 * Scenario 2: `pending` requests, `subscribers` event sockets, `waiters` long-polls and
 * (optionally) a loopback webhook receiver; decide them all at `rate` per second and measure
 * decision sent → WS message / long-poll return / webhook received. Requests are created and
 * decided on `url`; sockets and long-polls are spread over `watchUrls` (default: `url` alone), so
 * with other nodes there every wake-up crosses the cluster's change feed.
 */
export async function decideLatency(opts) {
  const run = await openDeliveryRun(opts);
  await run.warmUp();
  await run.decide(run.created);
  return run.finish();
}

/**
 * Scenario 2 on several servers at once, taken in turns: each server is set up as by
 * `decideLatency` (its own requests, sockets, long-polls and receiver), then its measured
 * requests are decided `block` at a time, one server after another (the order reversed every
 * other round), so every server sees the machine's speed of the same minutes. `server` (what
 * processes.mjs started) is stopped with SIGSTOP outside its turns: a server's own background
 * work (pings, checkpoints, timers) then runs in its own turns, not in another's.
 */
export async function interleavedDeliveries(optsList, { block = 100, pauseMs = 500 } = {}) {
  const runs = [];
  for (const opts of optsList) runs.push(await openDeliveryRun(opts));
  for (const run of runs) {
    await run.warmUp();
    await pause(pauseMs);
  }
  const signal = (i, sig) => optsList[i].server?.child.kill(sig);
  runs.forEach((_, i) => signal(i, 'SIGSTOP'));
  try {
    const rounds = Math.max(...runs.map((r) => Math.ceil(r.created.length / block)));
    for (let k = 0; k < rounds; k++) {
      const order = runs.map((_, i) => i);
      if (k % 2) order.reverse();
      for (const i of order) {
        const part = runs[i].created.slice(k * block, (k + 1) * block);
        if (part.length === 0) continue;
        signal(i, 'SIGCONT');
        // What fell due while the server was stopped runs before its first decision.
        await pause(pauseMs);
        await runs[i].decide(part);
        // Lets the block's deliveries end before the server stops.
        await pause(pauseMs);
        signal(i, 'SIGSTOP');
      }
    }
  } finally {
    runs.forEach((_, i) => signal(i, 'SIGCONT'));
  }
  const out = [];
  for (const run of runs) out.push(await run.finish());
  return out;
}

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

async function openDeliveryRun({
  url,
  watchUrls = [url],
  wsPath,
  headers = {},
  pending = 1000,
  subscribers = 1000,
  waiters = 0,
  rate = 50,
  webhook = false,
  warmup = 100,
  makeBody,
}) {
  let receiver = null;
  const hookSamples = [];
  const sentAt = new Map();
  if (webhook) {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const t = performance.now();
        try {
          const id = JSON.parse(body).data.request.id;
          if (sentAt.has(id)) hookSamples.push(t - sentAt.get(id));
        } catch {}
        res.writeHead(204).end();
      });
    });
    await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  }
  const callback = receiver ? `http://127.0.0.1:${receiver.address().port}/hook` : undefined;
  // The first `warmup` decisions run the same path unmeasured: the first few after a start pay
  // one-off costs (JIT, the first outgoing connection) that say nothing about steady state.
  const all = await inBatches(
    Array.from({ length: pending + warmup }, (_, i) => i),
    50,
    async (i) => {
      const body = { ...makeBody(i), ...(callback ? { callback_url: callback } : {}) };
      const r = await http(url + '/v1/requests', 'POST', body, headers);
      if (r.status !== 201) throw new Error(`create failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
  );
  const warm = all.slice(0, warmup);
  const created = all.slice(warmup);

  const wsSamples = [];
  let received = 0;
  const onMessage = (text) => {
    const t = performance.now();
    if (!text.includes('"request.decided"')) return;
    const id = messageRequestId(text);
    const t0 = sentAt.get(id);
    if (t0 !== undefined) {
      wsSamples.push(t - t0);
      received++;
    }
  };
  const sockets = [];
  for (let i = 0; i < watchUrls.length; i++) {
    const share = Math.floor(subscribers / watchUrls.length) + (i < subscribers % watchUrls.length ? 1 : 0);
    sockets.push(...(await openSockets(watchUrls[i].replace(/^http/, 'ws') + wsPath, share, headers, onMessage)));
  }

  const pollSamples = [];
  let polls = [];

  let conflicts = 0;
  const interval = 1000 / rate;
  const decideAll = async (list, measured) => {
    const start = performance.now();
    const decisions = [];
    for (let i = 0; i < list.length; i++) {
      const wait = start + i * interval - performance.now();
      if (wait > 0) await pause(wait);
      const r = list[i];
      if (measured) sentAt.set(r.id, performance.now());
      decisions.push(
        http(`${url}/v1/requests/${r.id}/decision`, 'POST', { option: 'approve', content_hash: r.content_hash }, headers).then((res) => {
          if (res.status !== 200) conflicts++;
        }),
      );
    }
    await Promise.all(decisions);
  };
  return {
    created,
    async warmUp() {
      // The long-polls start here, not at setup: a run set up long before its first block would
      // see them time out.
      polls = created.slice(0, waiters).map(async (r, i) => {
        const res = await http(`${watchUrls[i % watchUrls.length]}/v1/requests/${r.id}/wait?timeout=60s`, 'GET', undefined, headers);
        const t = performance.now();
        if (res.body?.status !== 'pending' && sentAt.has(r.id)) pollSamples.push(t - sentAt.get(r.id));
      });
      await pause(500); // let the long-polls register
      await decideAll(warm, false);
      await pause(1000);
    },
    /** Decides `list` (some of `created`) at `rate`, measured. */
    decide: (list) => decideAll(list, true),
    /** Waits for what is still on its way (at most 30 s), closes everything, and summarises. */
    async finish() {
      const deadline = performance.now() + 30_000;
      while ((received < created.length * subscribers || (webhook && hookSamples.length < created.length)) && performance.now() < deadline) {
        await pause(100);
      }
      await Promise.all(polls);
      for (const ws of sockets) ws.terminate();
      receiver?.close();
      return {
        ws: summarize(wsSamples),
        wsExpected: created.length * subscribers,
        poll: summarize(pollSamples),
        pollExpected: waiters,
        hook: summarize(hookSamples),
        hookExpected: webhook ? created.length : 0,
        failedDecisions: conflicts,
      };
    },
  };
}

/**
 * Scenario 3 (+5): seeds `due` requests that come due while the daemon is down and `spread`
 * pending requests expiring over `spreadMs` (starting `minMs` after they are created),
 * restarts the daemon, measures its RSS with `subscribers` event sockets connected (scenario 5),
 * closes those, then measures expiry lag on one /v1/events subscriber under light traffic.
 * `restart(downMs)` stops the daemon, waits, starts it again and returns `{url, pid}`.
 */
export async function expiryLag({ url, headers, due = 1000, spread = 10_000, spreadMs = 120_000, minMs = 20_000, restart, subscribers = 1000, eld, rssOf }) {
  const body = (i, timeout) => ({ title: `Expiring ${i}`, kind: 'command', timeout, on_timeout: i % 2 ? 'deny' : 'expire', source: { agent: 'bench' } });
  const seedStart = Date.now();
  await inBatches(
    Array.from({ length: due }, (_, i) => i),
    50,
    (i) => http(url + '/v1/requests', 'POST', body(i, '3s'), headers),
  );
  const seeded = await inBatches(
    Array.from({ length: spread }, (_, i) => i),
    50,
    async (i) => {
      const ms = minMs + Math.floor((i / spread) * spreadMs);
      const r = await http(url + '/v1/requests', 'POST', body(i, `${ms}ms`), headers);
      return r.body;
    },
  );
  const seedMs = Date.now() - seedStart;
  // Down long enough for the first `due` requests to come due while nothing runs.
  const { url: url2, pid } = await restart(4000);
  const startedAt = Date.now();

  // Scenario 5: memory with every request still pending and `subscribers` reviewers connected.
  const crowd = await openSockets(url2.replace(/^http/, 'ws') + '/v1/events', subscribers, headers, () => {});
  await new Promise((r) => setTimeout(r, 1000));
  const rssBytes = rssOf(pid);
  for (const ws of crowd) ws.terminate();

  const expiredAt = new Map();
  let dupes = 0;
  const lagSamples = [];
  const [probe] = await openSockets(url2.replace(/^http/, 'ws') + '/v1/events', 1, headers, (text) => {
    const t = Date.now();
    if (!text.includes('"request.expired"')) return;
    const m = JSON.parse(text);
    if (expiredAt.has(m.request.id)) dupes++;
    expiredAt.set(m.request.id, t);
    lagSamples.push(t - m.request.expires_at);
  });
  await eld.reset(pid);

  // Light traffic while the expiries run: about 5 creates and 5 decisions per second.
  let traffic = true;
  const trafficLoop = (async () => {
    while (traffic) {
      const r = await http(url2 + '/v1/requests', 'POST', { title: 'Light traffic', source: { agent: 'bench' } }, headers);
      await http(`${url2}/v1/requests/${r.body.id}/decision`, 'POST', { option: 'approve', content_hash: r.body.content_hash }, headers);
      await new Promise((res) => setTimeout(res, 200));
    }
  })();

  const lastDeadline = Math.max(...seeded.map((r) => r.expires_at));
  while (Date.now() < lastDeadline + 3000 && expiredAt.size < spread) await new Promise((r) => setTimeout(r, 250));
  traffic = false;
  await trafficLoop;
  const loop = await eld.read(pid);
  probe.terminate();
  return { seedMs, startedAt, lag: summarize(lagSamples), expiredOnStream: expiredAt.size, dupes, rssBytes, loop, url: url2 };
}

/**
 * Scenario 4: native frames from the format's e2e fixture, a new native key in each. `pooled`
 * gives the load scenario 1's shape: every second frame is one of 50 frames re-sent as they
 * were (a bridge replaying after a reconnect), which finds the record its first copy created.
 */
export function nativeFrameFactory(fixturePath, { pooled = false } = {}) {
  const fx = JSON.parse(readFileSync(fixturePath, 'utf8'));
  const key = String(fx.expect.native_key);
  const id = key.slice(key.lastIndexOf(':') + 1);
  const text = JSON.stringify(fx.frame);
  const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
  const fresh = (n) => text.split(id).join(isUuid ? randomUUID() : `${id}-${n}-${randomUUID().slice(0, 8)}`);
  const pool = new Map();
  let n = 0;
  return {
    query: new URLSearchParams(fx.query ?? {}).toString(),
    make: () => {
      n++;
      if (!pooled || n % 2 !== 0) return JSON.parse(fresh(n));
      const slot = (n / 2) % 50;
      if (!pool.has(slot)) pool.set(slot, fresh(`pool-${slot}`));
      return JSON.parse(pool.get(slot));
    },
  };
}

/**
 * Scenario 6: the Claude Code hook round trip against the handup long-poll, same daemon, same
 * reviewer. A reviewer bot on /v1/events approves every request the moment it is shown. Hook:
 * PreToolUse JSON in (POST …/claude-code/hook?wait=60s) → decision → hook output out. Long-poll:
 * POST /v1/requests → GET …/wait → decision → answer. Both are measured from the first byte the
 * agent sends to the answer it reads, interleaved so they share the machine's state.
 */
export async function hookRoundTrip({ url, headers = {}, samples = 500, concurrency = 10, warmup = 50 }) {
  let failures = 0;
  const reviewer = new WebSocket(url.replace(/^http/, 'ws') + '/v1/events', { headers, perMessageDeflate: false });
  await new Promise((resolve, reject) => {
    reviewer.on('open', resolve);
    reviewer.on('error', reject);
  });
  reviewer.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.type !== 'request.created' || m.request.status !== 'pending') return;
    const option = m.format === 'claude-code' ? 'allow' : 'approve';
    http(`${url}/v1/requests/${m.request.id}/decision`, 'POST', { option, content_hash: m.request.content_hash }, headers).then(
      (r) => {
        if (r.status !== 200) failures++;
      },
      () => failures++,
    );
  });

  const hookOnce = async () => {
    const frame = {
      session_id: 'bench-session',
      cwd: process.env.BENCH_HOOK_CWD ?? '/srv/bench',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'npm test', description: 'Run the tests' },
      tool_use_id: `toolu_${randomUUID()}`,
    };
    const t0 = performance.now();
    const r = await http(`${url}/v1/formats/claude-code/hook?wait=60s`, 'POST', frame, headers);
    const t = performance.now() - t0;
    if (r.status !== 200 || r.body?.hookSpecificOutput?.permissionDecision !== 'allow') failures++;
    return t;
  };
  const pollOnce = async () => {
    const t0 = performance.now();
    const created = await http(`${url}/v1/requests`, 'POST', { title: 'npm test', kind: 'command', source: { agent: 'bench' } }, headers);
    if (created.status !== 201) {
      failures++;
      return performance.now() - t0;
    }
    let r = created.body;
    while (r?.status === 'pending') r = (await http(`${url}/v1/requests/${created.body.id}/wait?timeout=60s`, 'GET', undefined, headers)).body;
    const t = performance.now() - t0;
    if (r?.status !== 'approved') failures++;
    return t;
  };

  const hookSamples = [];
  const pollSamples = [];
  let next = 0;
  const total = warmup + samples;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const [h, p] = i % 2 ? [await hookOnce(), await pollOnce()] : [await pollOnce(), await hookOnce()].reverse();
        if (i >= warmup) {
          hookSamples.push(h);
          pollSamples.push(p);
        }
      }
    }),
  );
  reviewer.close();
  return { hook: summarize(hookSamples), poll: summarize(pollSamples), failures };
}

#!/usr/bin/env node
// `npm run bench`: drives the real daemon and, in the same run, bare Fastify baselines, and prints
// one line per figure with its ratio to each baseline. A script, not a test: nothing here passes
// or fails on timing, but correctness checks (duplicates, lost decisions, expiries applied once)
// are reported and make the run exit non-zero.
//
// Knobs (env): BENCH_DURATION (s, default 10), BENCH_SYNCHRONOUS (full|normal, default full),
// BENCH_SCENARIOS (comma list of 1..9, default all), BENCH_RUNS (repeats of every scenario for
// the run-to-run spread, default 3), BENCH_HOOK_SAMPLES (scenario 6, default 300),
// BENCH_CPU_PROF=1 (profile the daemon's submit path into bench-results/), BENCH_SPREAD_S
// (expiry spread, default 120), CS_PG_BIN (where initdb and pg_ctl are, scenarios 8-9).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ADMIN_TOKEN, cpuSeconds, ROOT, startBaseline, startDaemon } from './processes.mjs';
import {
  cannonFigures,
  decideLatency,
  expiryLag,
  interleavedDeliveries,
  hookRoundTrip,
  http,
  nativeFrameFactory,
  submitBodyFactory,
  submitLoad,
} from './scenarios.mjs';
import { seedHistory, SIMULATED_RULES } from './seed-history.mjs';
import { fmt, spread } from './stats.mjs';
import { findPostgresBin, startPostgresServer } from '../scripts/postgres-server.mjs';

// The load generator runs on core 1, the servers on core 0.
if (!process.env.BENCH_PINNED && existsSync('/usr/bin/taskset')) {
  const r = spawnSync('taskset', ['-c', '1', process.execPath, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, BENCH_PINNED: '1' } });
  process.exit(r.status ?? 1);
}

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const SYNC = process.env.BENCH_SYNCHRONOUS === 'normal' ? 'normal' : 'full';
const SCENARIOS = new Set((process.env.BENCH_SCENARIOS ?? '1,2,3,4,5,6,7,8,9').split(','));
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 3));
const SPREAD_S = Number(process.env.BENCH_SPREAD_S ?? 120);
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const work = mkdtempSync(join(tmpdir(), 'countersign-bench-'));
const results = join(ROOT, 'bench-results');
mkdirSync(results, { recursive: true });
let failures = 0;

/**
 * A figure measured once per run: the median over runs, its range, and against each baseline
 * the median (and range) of the per-run ratios. `bases` maps a baseline's name to its per-run
 * figures.
 */
function lines(scenario, what, values, unit, bases = {}) {
  const v = spread(values);
  const range = v.n > 1 ? ` [${fmt(v.min)}–${fmt(v.max)}]` : '';
  let out = `${scenario.padEnd(10)} ${what.padEnd(38)} ${fmt(v.median).padStart(9)} ${unit}${range}`;
  for (const [name, base] of Object.entries(bases)) {
    const r = spread(values.map((x, i) => x / base[i]));
    const b = spread(base);
    out += `\n${''.padEnd(49)}${fmt(r.median, 2).padStart(9)}x ${name}${v.n > 1 ? ` [${fmt(r.min, 2)}–${fmt(r.max, 2)}]` : ''} (${name} ${fmt(b.median)} ${unit})`;
  }
  console.log(out);
}
const collect = (rows, key) => rows.map((r) => key(r));
function check(scenario, what, ok, detail) {
  console.log(`${scenario.padEnd(10)} ${what.padEnd(38)} ${ok ? 'ok' : 'FAILED'} ${detail}`);
  if (!ok) failures++;
}
const rssOf = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
};
const eldFile = join(work, 'eld.json');
const eld = {
  async reset(pid) {
    process.kill(pid, 'SIGWINCH');
    await new Promise((r) => setTimeout(r, 100));
  },
  async read(pid) {
    rmSync(eldFile, { force: true });
    process.kill(pid, 'SIGWINCH');
    for (let i = 0; i < 50 && !existsSync(eldFile); i++) await new Promise((r) => setTimeout(r, 50));
    return JSON.parse(readFileSync(eldFile, 'utf8'));
  },
};
const freshDir = (name) => {
  const d = join(work, name);
  mkdirSync(d, { recursive: true });
  return d;
};

console.log(
  `countersign benchmark · ${cpus().length} × ${cpus()[0]?.model} · ${(totalmem() / 2 ** 30).toFixed(0)} GiB · Node ${process.version} · synchronous=${SYNC} · ${DURATION}s per load run`,
);
console.log('');

// ---- 1. Submit throughput with dedupe, against both SQLite baselines ------------------------------
if (SCENARIOS.has('1')) {
  const rows = [];
  let dataDir;
  const profDir = process.env.BENCH_CPU_PROF ? freshDir('cpu-prof') : undefined;
  for (let run = 0; run < RUNS; run++) {
    const per = await startBaseline({ dbPath: join(freshDir(`baseline-1-${run}`), 'baseline.db'), synchronous: SYNC });
    const b = await withCpu(per, () => submitLoad({ url: per.url, duration: DURATION, makeBody: submitBodyFactory() }));
    await per.stop();
    const groupLoad = async (n) => {
      const grp = await startBaseline({ dbPath: join(freshDir(`baseline-1g-${run}-${n}`), 'baseline.db'), synchronous: SYNC, mode: 'group' });
      const g = await withCpu(grp, () => submitLoad({ url: grp.url, duration: DURATION, makeBody: submitBodyFactory() }));
      await grp.stop();
      return g;
    };
    // The group-commit baseline runs just before and just after the daemon, and the daemon is held
    // against the mean of the two: the machine's speed drifts within minutes (BENCHMARKS.md), and a
    // baseline on one side only takes the drift of those seconds for the daemon's own.
    const g1 = await groupLoad(1);
    dataDir = freshDir(`daemon-1-${run}`);
    // The profiler, when asked for, watches the last run only.
    const d1 = await startDaemon({ dataDir, synchronous: SYNC, cpuProfDir: run === RUNS - 1 ? profDir : undefined });
    const d = await withCpu(d1, () => submitLoad({ url: d1.url, headers: auth, duration: DURATION, makeBody: submitBodyFactory() }));
    await d1.stop();
    const g2 = await groupLoad(2);
    const mean = (k) => (g1[k] + g2[k]) / 2;
    const g = {
      rps: mean('rps'),
      p50: mean('p50'),
      p99: mean('p99'),
      busy: mean('busy'),
      cpuUs: mean('cpuUs'),
      errors: g1.errors + g2.errors,
      non2xx: g1.non2xx + g2.non2xx,
      total: g1.total + g2.total,
    };
    rows.push({ b, g, d });
    check(
      'submit',
      `run ${run + 1}: errors and non-2xx`,
      d.errors + d.non2xx === 0,
      `(${d.errors} errors, ${d.non2xx} non-2xx of ${d.total}; baselines ${b.errors + b.non2xx}, ${g.errors + g.non2xx})`,
    );
    const db = new Database(join(dataDir, 'countersign.db'), { readonly: true });
    const dupes = db
      .prepare(
        "SELECT COUNT(*) AS n FROM (SELECT dedupe_key FROM requests WHERE status = 'pending' AND dedupe_key IS NOT NULL GROUP BY dedupe_key HAVING COUNT(*) > 1)",
      )
      .get().n;
    const pooled = db.prepare("SELECT COUNT(*) AS n FROM requests WHERE dedupe_key LIKE 'pool-%'").get().n;
    db.close();
    check('submit', `run ${run + 1}: duplicate records`, dupes === 0 && pooled === 50, `(${dupes} duplicated keys; ${pooled} records for the 50 pooled keys)`);
  }
  const bases = (k) => ({ 'per-request baseline': collect(rows, (r) => r.b[k]), 'group-commit baseline': collect(rows, (r) => r.g[k]) });
  lines(
    'submit',
    'requests/s',
    collect(rows, (r) => r.d.rps),
    'req/s',
    bases('rps'),
  );
  lines(
    'submit',
    'latency p50',
    collect(rows, (r) => r.d.p50),
    'ms',
    bases('p50'),
  );
  lines(
    'submit',
    'latency p99',
    collect(rows, (r) => r.d.p99),
    'ms',
    bases('p99'),
  );
  // Which limit each server ran into: a server that keeps its core busy is bound by its own CPU
  // per submit; one that does not waits for something else (the group-commit baseline, for its
  // fsync, which runs inside COMMIT on its event loop).
  lines(
    'submit',
    'CPU per submit',
    collect(rows, (r) => r.d.cpuUs),
    'µs',
    bases('cpuUs'),
  );
  lines(
    'submit',
    'CPU busy: daemon',
    collect(rows, (r) => 100 * r.d.busy),
    '% of its core',
  );
  lines(
    'submit',
    'CPU busy: group-commit baseline',
    collect(rows, (r) => 100 * r.g.busy),
    '% of its core',
  );
  lines(
    'submit',
    'CPU busy: per-request baseline',
    collect(rows, (r) => 100 * r.b.busy),
    '% of its core',
  );
  console.log('submit     target: >= 0.8x the group-commit baseline');
  if (profDir) {
    const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
    if (file) {
      writeFileSync(join(results, 'submit.cpuprofile'), readFileSync(join(profDir, file)));
      printProfile(JSON.parse(readFileSync(join(profDir, file), 'utf8')));
    }
  }
  console.log('');
}

// ---- 2. Decide-to-delivery latency ------------------------------------------------------------
if (SCENARIOS.has('2')) {
  const makeBody = (i) => ({ title: `Approve deploy ${i}`, kind: 'command', source: { agent: 'bench' } });
  const rows = [];
  for (let run = 0; run < RUNS; run++) {
    // The baseline and both daemon setups run side by side and are decided in turns, 100
    // decisions at a time, each server stopped outside its turns (scenarios.mjs,
    // interleavedDeliveries): a p99 is set by a few stalls, and the machine's stalls come and go
    // within minutes (the baseline's own p99 moved 25–72 ms between runs of run M), so each
    // server is measured over the same minutes as the others.
    const base = await startBaseline({ dbPath: join(freshDir(`baseline-2-${run}`), 'baseline.db'), synchronous: SYNC });
    // The full scenario: long-poll waiters and a webhook receiver on top.
    const d2 = await startDaemon({ dataDir: freshDir(`daemon-2-${run}`), synchronous: SYNC });
    // Like for like: the same work as the baseline (decide, then broadcast, nothing else).
    const d2a = await startDaemon({ dataDir: freshDir(`daemon-2a-${run}`), synchronous: SYNC });
    const [b, d, only] = await interleavedDeliveries([
      { server: base, url: base.url, wsPath: '/v1/events', makeBody, waiters: 0 },
      { server: d2, url: d2.url, wsPath: '/v1/events', headers: auth, makeBody, waiters: 200, webhook: true },
      { server: d2a, url: d2a.url, wsPath: '/v1/events', headers: auth, makeBody, waiters: 0, webhook: false },
    ]);
    await base.stop();
    await d2.stop();
    await d2a.stop();
    rows.push({ b, d, only });
    console.log(
      `deliver    run ${run + 1}: WebSocket p99 ${fmt(d.ws.p99)} ms vs baseline ${fmt(b.ws.p99)} ms = ${fmt(d.ws.p99 / b.ws.p99, 2)}x; long-poll p99 ${fmt(d.poll.p99)} ms = ${fmt(d.poll.p99 / b.ws.p99, 2)}x; WS only ${fmt(only.ws.p99)} ms = ${fmt(only.ws.p99 / b.ws.p99, 2)}x`,
    );
    check(
      'deliver',
      `run ${run + 1}: every decision delivered`,
      d.ws.n === d.wsExpected && d.poll.n === d.pollExpected && d.failedDecisions === 0,
      `(ws ${d.ws.n}/${d.wsExpected}, long-poll ${d.poll.n}/${d.pollExpected}, failed decisions ${d.failedDecisions}; baseline ws ${b.ws.n}/${b.wsExpected})`,
    );
    check('deliver', `run ${run + 1}: every webhook received`, d.hook.n === d.hookExpected, `(${d.hook.n}/${d.hookExpected})`);
  }
  const base = (k) => ({ baseline: collect(rows, (r) => r.b.ws[k]) });
  lines(
    'deliver',
    'WS only: decision → WebSocket p50',
    collect(rows, (r) => r.only.ws.p50),
    'ms',
    base('p50'),
  );
  lines(
    'deliver',
    'WS only: decision → WebSocket p99',
    collect(rows, (r) => r.only.ws.p99),
    'ms',
    base('p99'),
  );
  lines(
    'deliver',
    'decision → WebSocket p50',
    collect(rows, (r) => r.d.ws.p50),
    'ms',
    base('p50'),
  );
  lines(
    'deliver',
    'decision → WebSocket p99',
    collect(rows, (r) => r.d.ws.p99),
    'ms',
    base('p99'),
  );
  lines(
    'deliver',
    'decision → long-poll p50',
    collect(rows, (r) => r.d.poll.p50),
    'ms',
    { 'baseline WS': collect(rows, (r) => r.b.ws.p50) },
  );
  lines(
    'deliver',
    'decision → long-poll p99',
    collect(rows, (r) => r.d.poll.p99),
    'ms',
    { 'baseline WS': collect(rows, (r) => r.b.ws.p99) },
  );
  lines(
    'deliver',
    'decision → webhook p50',
    collect(rows, (r) => r.d.hook.p50),
    'ms',
  );
  lines(
    'deliver',
    'decision → webhook p99',
    collect(rows, (r) => r.d.hook.p99),
    'ms',
  );
  console.log('deliver    target: WebSocket and long-poll p99 <= 1.2x the baseline in every run');
  console.log('');
}

// ---- 3 + 5. Expiry lag under 10k pending; memory -----------------------------------------------
if (SCENARIOS.has('3') || SCENARIOS.has('5')) {
  const rows = [];
  for (let run = 0; run < RUNS; run++) {
    const dataDir = freshDir(`daemon-3-${run}`);
    let d3 = await startDaemon({ dataDir, synchronous: SYNC, eldFile });
    const r = await expiryLag({
      url: d3.url,
      headers: auth,
      spreadMs: SPREAD_S * 1000,
      eld,
      rssOf,
      restart: async (downMs) => {
        await d3.stop();
        await new Promise((res) => setTimeout(res, downMs));
        d3 = await startDaemon({ dataDir, synchronous: SYNC, eldFile });
        return { url: d3.url, pid: d3.child.pid };
      },
    });
    await d3.stop();
    const db = new Database(join(dataDir, 'countersign.db'), { readonly: true });
    const twice = db
      .prepare("SELECT COUNT(*) AS n FROM (SELECT request_id FROM audit WHERE event = 'expired' GROUP BY request_id HAVING COUNT(*) > 1)")
      .get().n;
    const expired = db.prepare("SELECT COUNT(*) AS n FROM requests WHERE status = 'expired'").get().n;
    const atStart = db.prepare("SELECT COUNT(*) AS n, MAX(at) AS last FROM audit WHERE event = 'expired' AND at < ?").get(r.startedAt + 5000);
    db.close();
    rows.push(r);
    if (SCENARIOS.has('3')) {
      check('expiry', `run ${run + 1}: due-while-down expired at start`, atStart.n >= 1000, `(${atStart.n} expiries in the first 5 s after start)`);
      check(
        'expiry',
        `run ${run + 1}: each expiry applied exactly once`,
        twice === 0 && r.dupes === 0 && expired === 11000 && r.expiredOnStream === 10000,
        `(${expired} expired of 11000; ${r.expiredOnStream} of 10000 seen on the stream; ${twice} twice in audit; ${r.dupes} twice on the stream)`,
      );
    }
  }
  if (SCENARIOS.has('3')) {
    const figures = {
      'expiry lag p50 (expires_at → WS)': (r) => r.lag.p50,
      'expiry lag p99': (r) => r.lag.p99,
      'expiry lag max': (r) => r.lag.max,
      'event-loop delay p99': (r) => r.loop.p99,
      'event-loop delay max': (r) => r.loop.max,
    };
    for (const [what, key] of Object.entries(figures)) lines('expiry', what, collect(rows, key), 'ms');
  }
  if (SCENARIOS.has('5'))
    lines(
      'memory',
      'RSS with 10k pending + 1k subscribers',
      collect(rows, (r) => r.rssBytes / 2 ** 20),
      'MiB',
    );
  console.log('');
}

// ---- 4. Native formats ----------------------------------------------------------------------------
if (SCENARIOS.has('4')) {
  const { FORMAT_NAMES } = await import(join(ROOT, 'dist', 'adapters', 'registry.js'));
  const natives = FORMAT_NAMES.filter((f) => f !== 'handup' && existsSync(join(ROOT, 'test', 'fixtures', f, 'e2e-request.json')));
  // Two shapes of load, each format measured in both and held against handup in the same shape:
  // scenario 1's (half the requests are dedupe hits, or for a native format re-sent frames,
  // which write nothing) and every request new, which writes a record per request. The
  // machine's speed drifts over minutes, so each load is paired with a handup load of the same
  // shape run next to it (which goes first alternates), and each ratio is taken within its
  // pair. Every load gets a daemon of its own on an empty data directory: on a shared one each
  // load ran on the rows of every load before it.
  const SHAPES = { pooled: '50 % re-sent', fresh: 'every one new' };
  const byFormat = Object.fromEntries(natives.map((f) => [f, { pooled: { own: [], handup: [] }, fresh: { own: [], handup: [] } }]));
  const onFreshDaemon = async (name, path, makeBody) => {
    const d4 = await startDaemon({ dataDir: freshDir(name), synchronous: SYNC });
    try {
      return cannonFigures(await submitLoad({ url: d4.url, path, headers: auth, duration: DURATION, makeBody }));
    } finally {
      await d4.stop();
    }
  };
  let turn = 0;
  for (let run = 0; run < RUNS; run++) {
    for (const format of natives) {
      for (const shape of Object.keys(SHAPES)) {
        const pooled = shape === 'pooled';
        const frames = nativeFrameFactory(join(ROOT, 'test', 'fixtures', format, 'e2e-request.json'), { pooled });
        const path = `/v1/formats/${format}/requests${frames.query ? `?${frames.query}` : ''}`;
        const measure = async (who, name, target, makeBody) => {
          const f = await onFreshDaemon(name, target, makeBody);
          byFormat[format][shape][who].push(f.rps);
          const what = who === 'own' ? `${format} (${shape})` : `${format}'s handup pair (${shape})`;
          check('formats', `run ${run + 1}: ${what} errors and non-2xx`, f.errors + f.non2xx === 0, `(${f.errors} errors, ${f.non2xx} non-2xx of ${f.total})`);
        };
        const loads = [
          () => measure('handup', `daemon-4-${run}-${format}-${shape}-handup`, undefined, submitBodyFactory({ pooled })),
          () => measure('own', `daemon-4-${run}-${format}-${shape}`, path, frames.make),
        ];
        if ((turn++ + run) % 2 === 1) loads.reverse();
        for (const load of loads) await load();
      }
    }
  }
  for (const [shape, label] of Object.entries(SHAPES)) {
    lines(
      'formats',
      `handup requests/s (${label}), all pairs`,
      natives.flatMap((f) => byFormat[f][shape].handup),
      'req/s',
    );
  }
  for (const format of natives) {
    for (const [shape, label] of Object.entries(SHAPES)) {
      const { own, handup } = byFormat[format][shape];
      lines('formats', `${format} requests/s (${label})`, own, 'req/s', { [`its handup pair (${label})`]: handup });
    }
  }
  console.log('formats    target: every format >= 0.7x handup, each shape of load against handup in the same shape');
  console.log('');
}

// ---- 6. Claude Code hook round trip against the long-poll ----------------------------------------
if (SCENARIOS.has('6')) {
  const samples = Number(process.env.BENCH_HOOK_SAMPLES ?? 300);
  const rows = [];
  for (let run = 0; run < RUNS; run++) {
    const d6 = await startDaemon({ dataDir: freshDir(`daemon-6-${run}`), synchronous: SYNC });
    const r = await hookRoundTrip({ url: d6.url, headers: auth, samples });
    await d6.stop();
    rows.push(r);
    check(
      'hook',
      `run ${run + 1}: every call answered allow`,
      r.failures === 0 && r.hook.n === samples && r.poll.n === samples,
      `(${r.hook.n} hook and ${r.poll.n} long-poll samples of ${samples}; ${r.failures} failures)`,
    );
  }
  for (const q of ['p50', 'p99']) {
    const poll = collect(rows, (r) => r.poll[q]);
    lines(
      'hook',
      `PreToolUse → decision → output ${q}`,
      collect(rows, (r) => r.hook[q]),
      'ms',
      { 'long-poll': poll },
    );
    lines('hook', `long-poll create → decision → answer ${q}`, poll, 'ms');
  }
  console.log('');
}

// ---- 7. Rules replayed over history --------------------------------------------------------------
if (SCENARIOS.has('7')) {
  const HISTORY = 100_000;
  const dataDir = freshDir('daemon-7');
  const seedStart = Date.now();
  await seedHistory(dataDir, HISTORY);
  console.log(`simulate   seeded ${HISTORY.toLocaleString('en')} ended requests through the store in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`);
  // Each run is a daemon of its own on the seeded history: one unmeasured call (JIT, page
  // cache), as in the delivery scenario, then five measured.
  const medians = [];
  const slowest = [];
  for (let run = 0; run < RUNS; run++) {
    const d7 = await startDaemon({ dataDir, synchronous: SYNC });
    const times = [];
    let answer;
    for (let i = 0; i < 6; i++) {
      const t0 = performance.now();
      answer = await http(`${d7.url}/v1/rules/simulate`, 'POST', { rules: SIMULATED_RULES }, auth);
      if (i > 0) times.push(performance.now() - t0);
    }
    await d7.stop();
    times.sort((a, b) => a - b);
    medians.push(times[Math.floor(times.length / 2)]);
    slowest.push(times[times.length - 1]);
    check(
      'simulate',
      `run ${run + 1}: every ended request replayed`,
      answer.status === 200 && answer.body.evaluated === HISTORY,
      `(${answer.status}; evaluated ${answer.body?.evaluated} of ${HISTORY}; would ${JSON.stringify(answer.body?.would)})`,
    );
  }
  lines('simulate', `POST /v1/rules/simulate, ${SIMULATED_RULES.length} rules, median`, medians, 'ms');
  lines('simulate', 'POST /v1/rules/simulate, slowest of 5', slowest, 'ms');
  console.log(`simulate   target: under 2000 ms on one core (the daemon runs pinned to one)`);
  console.log('');
}

// ---- 8 + 9. PostgreSQL: submit against its bare baseline; wake-up on one node and across three ----
if (SCENARIOS.has('8') || SCENARIOS.has('9')) {
  if (!findPostgresBin()) {
    console.log('postgres   skipped (PostgreSQL not installed)');
  } else {
    const { default: pg } = await import('pg');
    // The benchmark process runs on core 1; PostgreSQL inherits the affinity of whoever starts it,
    // so it is started with both cores allowed (the daemons stay on core 0, the load on core 1).
    const affinity = (cores) => existsSync('/usr/bin/taskset') && spawnSync('taskset', ['-p', '-c', cores, String(process.pid)], { stdio: 'ignore' });
    affinity('0,1');
    const server = await startPostgresServer({ durable: true });
    affinity('1');
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    let dbs = 0;
    const freshDb = async () => {
      const name = `bench_${++dbs}`;
      await admin.query(`CREATE DATABASE ${name}`);
      return server.url.replace(/\/postgres$/, `/${name}`);
    };
    const pgDaemon = async (dbUrl, name) =>
      startDaemon({ dataDir: freshDir(name), synchronous: SYNC, env: { COUNTERSIGN_STORAGE_URL: dbUrl, COUNTERSIGN_CLUSTER_HEARTBEAT_INTERVAL: '2s' } });
    // [passed, detail] for the duplicate-records check: no dedupe key twice among pending records,
    // and exactly one record for each of the 50 pooled keys.
    const duplicates = async (dbUrl) => {
      const c = new pg.Client({ connectionString: dbUrl });
      await c.connect();
      const dupes = (
        await c.query(
          "SELECT COUNT(*)::int AS n FROM (SELECT dedupe_key FROM requests WHERE status = 'pending' AND dedupe_key IS NOT NULL GROUP BY dedupe_key HAVING COUNT(*) > 1) d",
        )
      ).rows[0].n;
      const pooled = (await c.query("SELECT COUNT(*)::int AS n FROM requests WHERE dedupe_key LIKE 'pool-%'")).rows[0].n;
      await c.end();
      return [dupes === 0 && pooled === 50, `(${dupes} duplicated keys; ${pooled} records for the 50 pooled keys)`];
    };
    try {
      if (SCENARIOS.has('8')) {
        const rows = [];
        for (let run = 0; run < RUNS; run++) {
          const base = await startBaseline({ mode: 'postgres', pgUrl: await freshDb() });
          const b = cannonFigures(await submitLoad({ url: base.url, duration: DURATION, makeBody: submitBodyFactory() }));
          await base.stop();
          const dbUrl = await freshDb();
          const d8 = await pgDaemon(dbUrl, `daemon-8-${run}`);
          const d = cannonFigures(await submitLoad({ url: d8.url, headers: auth, duration: DURATION, makeBody: submitBodyFactory() }));
          await d8.stop();
          // Three daemons on one database; autocannon hands its connections to the URLs in turn
          // (33 each), so the pooled dedupe keys arrive at every node at once.
          const dbUrl3 = await freshDb();
          const trio = [];
          for (const n of ['a', 'b', 'c']) trio.push(await pgDaemon(dbUrl3, `daemon-8-${n}-${run}`));
          const m = cannonFigures(
            await submitLoad({ url: trio.map((x) => x.url), connections: 99, headers: auth, duration: DURATION, makeBody: submitBodyFactory() }),
          );
          for (const x of trio) await x.stop();
          // The control: the same three processes and load, each daemon on a database of its own.
          // What three nodes lose against it is the cluster's; what it loses against one node is
          // three processes sharing one core.
          const apart = [];
          for (const n of ['a', 'b', 'c']) apart.push(await pgDaemon(await freshDb(), `daemon-8-apart-${n}-${run}`));
          const s = cannonFigures(
            await submitLoad({ url: apart.map((x) => x.url), connections: 99, headers: auth, duration: DURATION, makeBody: submitBodyFactory() }),
          );
          for (const x of apart) await x.stop();
          rows.push({ b, d, m, s });
          for (const [name, f, url] of [
            ['one node', d, dbUrl],
            ['three nodes', m, dbUrl3],
          ]) {
            check(
              'pg submit',
              `run ${run + 1}: ${name}: errors and non-2xx`,
              f.errors + f.non2xx === 0,
              `(${f.errors} errors, ${f.non2xx} non-2xx of ${f.total}; baseline ${b.errors + b.non2xx})`,
            );
            check('pg submit', `run ${run + 1}: ${name}: duplicate records`, ...(await duplicates(url)));
          }
          check(
            'pg submit',
            `run ${run + 1}: three apart: errors and non-2xx`,
            s.errors + s.non2xx === 0,
            `(${s.errors} errors, ${s.non2xx} non-2xx of ${s.total})`,
          );
        }
        const bases = (k) => ({ 'PostgreSQL baseline': collect(rows, (r) => r.b[k]) });
        for (const [name, k] of [
          ['one node', 'd'],
          ['three nodes', 'm'],
          ['three apart', 's'],
        ]) {
          for (const [what, figure, unit] of [
            ['requests/s', 'rps', 'req/s'],
            ['latency p50', 'p50', 'ms'],
            ['latency p99', 'p99', 'ms'],
          ]) {
            lines(
              'pg submit',
              `${what}, ${name}`,
              collect(rows, (r) => r[k][figure]),
              unit,
              bases(figure),
            );
          }
        }
        const cluster = spread(rows.map((r) => r.m.rps / r.s.rps));
        console.log(
          `pg submit  ${'three nodes / three apart, requests/s'.padEnd(38)} ${fmt(cluster.median, 2).padStart(9)}x${cluster.n > 1 ? ` [${fmt(cluster.min, 2)}–${fmt(cluster.max, 2)}]` : ''}`,
        );
        console.log('pg submit  target: one node >= 0.85x the PostgreSQL baseline (three nodes: reported, they share core 0)');
        console.log('');
      }
      if (SCENARIOS.has('9')) {
        // Decisions on node A at 50/s; 100 WebSocket subscribers and 100 long-polls watching, on
        // A itself (one node) or on B and C (three nodes: every wake-up crosses LISTEN/NOTIFY).
        const makeBody = (i) => ({ title: `Approve deploy ${i}`, kind: 'command', source: { agent: 'bench' } });
        const opts = { wsPath: '/v1/events', headers: auth, makeBody, pending: 300, subscribers: 100, waiters: 100, warmup: 50 };
        const rows = [];
        for (let run = 0; run < RUNS; run++) {
          const one = await pgDaemon(await freshDb(), `daemon-9-one-${run}`);
          const single = await decideLatency({ url: one.url, ...opts });
          await one.stop();
          const dbUrl = await freshDb();
          const nodes = [];
          for (const n of ['a', 'b', 'c']) nodes.push(await pgDaemon(dbUrl, `daemon-9-${n}-${run}`));
          const multi = await decideLatency({ url: nodes[0].url, watchUrls: [nodes[1].url, nodes[2].url], ...opts });
          for (const node of nodes) await node.stop();
          rows.push({ single, multi });
          for (const [name, r] of [
            ['one node', single],
            ['three nodes', multi],
          ]) {
            check(
              'pg wake',
              `run ${run + 1}: ${name}: every decision delivered`,
              r.ws.n === r.wsExpected && r.poll.n === r.pollExpected && r.failedDecisions === 0,
              `(ws ${r.ws.n}/${r.wsExpected}, long-poll ${r.poll.n}/${r.pollExpected}, failed decisions ${r.failedDecisions})`,
            );
          }
        }
        for (const [what, k] of [
          ['WebSocket', 'ws'],
          ['long-poll', 'poll'],
        ]) {
          for (const p of ['p50', 'p99']) {
            const single = collect(rows, (r) => r.single[k][p]);
            const multi = collect(rows, (r) => r.multi[k][p]);
            lines('pg wake', `decision → ${what} ${p}, one node`, single, 'ms');
            lines('pg wake', `decision → ${what} ${p}, across nodes`, multi, 'ms');
            if (p === 'p99') {
              const extra = spread(multi.map((m, i) => m - single[i]));
              console.log(
                `pg wake    ${`${what} p99 across nodes − one node`.padEnd(38)} ${fmt(extra.median).padStart(9)} ms${extra.n > 1 ? ` [${fmt(extra.min)}–${fmt(extra.max)}]` : ''}`,
              );
            }
          }
        }
        console.log('pg wake    target: p99 across nodes <= p99 on one node + 100 ms');
        console.log('');
      }
    } finally {
      await admin.end();
      server.destroy();
    }
  }
}

rmSync(work, { recursive: true, force: true });
console.log(failures ? `${failures} correctness check(s) FAILED` : 'all correctness checks passed');
process.exit(failures ? 1 : 0);

/**
 * A load's figures, with the CPU its server used over it (user and system, every thread, warm-up
 * included): `busy`, the share of its core it kept busy, and `cpuUs`, CPU microseconds per request
 * at that share and the load's rate.
 */
async function withCpu(server, load) {
  const c0 = cpuSeconds(server.child.pid);
  const t0 = performance.now();
  const figures = cannonFigures(await load());
  const busy = (cpuSeconds(server.child.pid) - c0) / ((performance.now() - t0) / 1000);
  return { ...figures, busy, cpuUs: (busy * 1e6) / figures.rps };
}

/** Top functions by self time in a V8 CPU profile. */
function printProfile(profile) {
  const total = profile.samples.length;
  const self = new Map();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const counts = new Map();
  for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
  for (const [id, c] of counts) {
    const n = byId.get(id);
    const where = n.callFrame.url ? n.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/') : '';
    const key = `${n.callFrame.functionName || '(anonymous)'} ${where}${where ? `:${n.callFrame.lineNumber + 1}` : ''}`;
    self.set(key, (self.get(key) ?? 0) + c);
  }
  console.log('submit    CPU profile, top self time:');
  for (const [k, c] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`            ${((100 * c) / total).toFixed(1).padStart(5)}%  ${k}`);
}

// Preloaded into the daemon by the benchmark (`node --import ./bench/eld-probe.mjs ...`): measures
// the daemon's own event-loop delay and writes it to BENCH_ELD_FILE on SIGWINCH (then resets;
// SIGWINCH because the daemon treats SIGUSR2, like SIGTERM, as a request to shut down).
// The daemon's code is unchanged; this only observes it.
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.BENCH_ELD_FILE;
if (file) {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  process.on('SIGWINCH', () => {
    writeFileSync(file, JSON.stringify({ p50: h.percentile(50) / 1e6, p99: h.percentile(99) / 1e6, max: h.max / 1e6, rss: process.memoryUsage().rss }));
    h.reset();
  });
}

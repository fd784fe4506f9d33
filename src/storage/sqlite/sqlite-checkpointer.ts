import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export interface CheckpointResult {
  /** Frames in the WAL, and how many of them are now copied into the database file. */
  log: number;
  checkpointed: number;
  /** 1 when a reader or writer kept the checkpoint from running to the end (it resumes next time). */
  busy: number;
}

export interface SqliteCheckpointerOptions {
  synchronous: 'full' | 'normal';
  /** How often the WAL is copied into the database file. */
  intervalMs?: number;
  onError?: (err: Error) => void;
}

// The worker is plain CommonJS, evaluated from this string, so it runs the same from the
// compiled daemon and from the sources under test. It loads the driver by absolute path.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 5000, fileMustExist: true });
db.pragma('synchronous = ' + workerData.synchronous);
const run = () => {
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    return { log: r.log, checkpointed: r.checkpointed, busy: r.busy };
  } catch (err) {
    return { error: String((err && err.message) || err) };
  }
};
const timer = setInterval(() => {
  const r = run();
  if (r.error) parentPort.postMessage({ id: null, ...r });
}, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m.stop) {
    clearInterval(timer);
    db.close();
    parentPort.postMessage({ id: m.id, stopped: true });
    parentPort.close();
    return;
  }
  parentPort.postMessage({ id: m.id, ...run() });
});
`;

/**
 * WAL checkpoints off the event loop. With SQLite's automatic checkpoint, the COMMIT that takes
 * the WAL past 1,000 pages copies them into the database file and fsyncs it, on the event loop,
 * holding up every socket the daemon serves; the writer turns that off (`wal_autocheckpoint = 0`)
 * and this worker thread, on its own connection, runs a PASSIVE checkpoint every `intervalMs`.
 * PASSIVE never blocks the writer or readers, and a checkpoint only copies frames of committed
 * transactions, so a crash at any point loses nothing that was acknowledged: the WAL still holds
 * whatever the database file does not. The writer reuses the WAL from its start once a
 * checkpoint has copied all of it, so the file stays bounded.
 */
export function startSqliteCheckpointer(path: string, { synchronous, intervalMs = 1000, onError = () => {} }: SqliteCheckpointerOptions) {
  let nextId = 1;
  const waiting = new Map<number, (reply: Record<string, unknown>) => void>();
  let failed: Error | undefined;
  let worker: Worker | null = null;
  let stopped = false;

  // The thread starts when the first checkpoint is due, not with the store: a worker costs tens
  // of milliseconds of CPU to boot, and there is nothing to copy before then.
  const spawn = (): Worker => {
    if (worker) return worker;
    const w = new Worker(WORKER, {
      eval: true,
      workerData: {
        path,
        synchronous: synchronous === 'full' ? 'FULL' : 'NORMAL',
        intervalMs,
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      },
    });
    // A checkpointer alone must not keep the daemon running.
    w.unref();
    w.on('message', (m: { id: number | null; error?: string } & Record<string, unknown>) => {
      if (m.id === null || (m.id === 0 && m.error)) return onError(new Error(`WAL checkpoint failed: ${m.error}`));
      waiting.get(m.id)?.(m);
      waiting.delete(m.id);
      if (waiting.size === 0 && !stopped) w.unref();
    });
    w.on('error', (err) => {
      failed = err;
      onError(err);
      for (const resolve of waiting.values()) resolve({ error: err.message });
      waiting.clear();
    });
    // The worker's first checkpoint runs one interval after it starts, so it runs one now.
    w.postMessage({ id: 0 });
    worker = w;
    return w;
  };
  const first = setTimeout(spawn, intervalMs);
  first.unref();

  const ask = (message: object) =>
    new Promise<Record<string, unknown>>((resolve) => {
      if (failed) return resolve({ error: failed.message });
      const id = nextId++;
      waiting.set(id, resolve);
      // Someone waits for this answer (close() does): the process stays up until it comes, even
      // when the worker is the last thing running (a long checkpoint at shutdown).
      const w = spawn();
      w.ref();
      w.postMessage({ id, ...message });
    });

  return {
    /** Runs a checkpoint now (tests, diagnostics). */
    async checkpoint(): Promise<CheckpointResult> {
      const r = await ask({});
      if (r.error) throw new Error(`WAL checkpoint failed: ${String(r.error)}`);
      return r as unknown as CheckpointResult;
    },
    /** Stops the worker and closes its connection. */
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      clearTimeout(first);
      if (failed || !worker) return;
      const w = worker;
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
      await ask({ stop: true });
      await exited;
    },
  };
}

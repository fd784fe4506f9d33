#!/usr/bin/env node
// `node bench/create-sql.mjs` (after `npm run build`): what each part of a handup create's SQL
// costs, on the daemon's own schema (its migrations) and SQLite settings, without HTTP or
// JavaScript around it. Variants leave one part out, each on a file of its own, and run in
// turns (1,000 creates of each, 60 rounds, the order reversed every other round), so the
// machine's drift falls on all of them alike. Every create is one savepoint in a batch of 50,
// as in the daemon's group commit; COMMIT does not sync (the daemon syncs off the event loop).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { migrateSqlite } from '../dist/storage/sqlite/sqlite-migrate.js';
import { buildRecord } from './request-shape.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 60);
const BATCH = 50;
const PER_ROUND = 1000;

const VARIANTS = {
  'the daemon (lookup, policy state, request, audit)': {},
  'without the policy state read': { noPolicy: true },
  'without the audit row': { noAudit: true },
  'without the status and submitter indexes': { drop: ['requests_status', 'requests_submitter'] },
  'audit without AUTOINCREMENT': { plainAudit: true },
  "the group-commit baseline's (bench/baseline-server.mjs)": { baseline: true },
};

// The body scenario 1 sends for a new request (bench/scenarios.mjs), as its record.
const record = (key) =>
  buildRecord(
    'x',
    {
      title: 'Run migration 1234',
      summary: 'Benchmark request',
      kind: 'command',
      risk: 'low',
      dedupe_key: key,
      source: { agent: 'bench', session: 'bench-session' },
      previews: [{ type: 'command', command: { shell: 'echo hello' } }],
    },
    0,
  );

/** The baseline's schema and statements, as bench/baseline-server.mjs has them. */
function openBaseline(db) {
  db.exec(`
    CREATE TABLE requests (id TEXT PRIMARY KEY, dedupe_key TEXT, status TEXT NOT NULL, record TEXT NOT NULL, created_at INTEGER NOT NULL);
    CREATE UNIQUE INDEX requests_dedupe ON requests (dedupe_key) WHERE status = 'pending' AND dedupe_key IS NOT NULL;
    CREATE TABLE outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, request_id TEXT NOT NULL, payload TEXT NOT NULL, next_attempt_at INTEGER NOT NULL);
  `);
  const lookup = db.prepare("SELECT record FROM requests WHERE dedupe_key = ? AND status = 'pending'");
  const insert = db.prepare('INSERT INTO requests (id, dedupe_key, status, record, created_at) VALUES (?, ?, ?, ?, ?)');
  const outbox = db.prepare('INSERT INTO outbox (request_id, payload, next_attempt_at) VALUES (?, ?, ?)');
  return (id, key, row, n) => {
    lookup.get(key);
    insert.run(id, key, 'pending', row, n);
    outbox.run(id, row, n);
  };
}

function open(dir, variant) {
  const db = new Database(join(dir, 'countersign.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('temp_store = MEMORY');
  db.pragma('wal_autocheckpoint = 0');
  const baseline = variant.baseline ? openBaseline(db) : null;
  if (!baseline) migrateSqlite(db);
  for (const index of variant.drop ?? []) db.exec(`DROP INDEX ${index}`);
  if (variant.plainAudit) {
    db.exec(`DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete; DROP TABLE audit;
      CREATE TABLE audit (id INTEGER PRIMARY KEY, request_id TEXT NOT NULL, event TEXT NOT NULL, actor TEXT NOT NULL, at INTEGER NOT NULL, details TEXT);
      CREATE INDEX audit_request ON audit (request_id, id);`);
  }
  const s = {
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    savepoint: db.prepare('SAVEPOINT write'),
    release: db.prepare('RELEASE write'),
    // The daemon's statements, as its SQL request and policy records send them.
  };
  const create = baseline ?? daemonCreate(db, variant);
  let n = 0;
  let ns = 0n;
  return {
    db,
    round() {
      // Bodies are made before the clock starts: only SQL is timed.
      const keys = Array.from({ length: PER_ROUND }, (_, i) => `uniq-${n + i}-${randomUUID()}`);
      const rows = keys.map(record);
      const t0 = process.hrtime.bigint();
      for (let b = 0; b < PER_ROUND; b += BATCH) {
        s.begin.run();
        for (let i = b; i < b + BATCH; i++) {
          const id = `01K${String(++n).padStart(23, '0')}`;
          s.savepoint.run();
          create(id, keys[i], rows[i], n);
          s.release.run();
        }
        s.commit.run();
      }
      ns += process.hrtime.bigint() - t0;
    },
    microsPerCreate: () => Number(ns) / n / 1000,
  };
}

/** The daemon's statements, as its SQL request and policy records send them. */
function daemonCreate(db, variant) {
  const lookup = db.prepare(
    "SELECT id, format, submitter, status, record, native_key, native_context, native_reply, resolved_at FROM requests WHERE submitter = ? AND dedupe_key = ? AND status = 'pending' AND native_key IS NULL",
  );
  const policy = db.prepare('SELECT version, auto_mode, auto_until, auto_set_at, auto_set_by, history_indexed FROM policy_state WHERE id = 1');
  const insert = db.prepare(
    `INSERT INTO requests (id, format, submitter, status, kind, agent, session, dedupe_key, native_key, content_hash, created_at, expires_at, resolved_at, record, native_frame, native_context, native_reply) VALUES (${Array(17).fill('?').join(', ')})`,
  );
  const audit = db.prepare('INSERT INTO audit (request_id, event, actor, at, details) VALUES (?, ?, ?, ?, ?)');
  return (id, key, row, n) => {
    lookup.get('admin', key);
    if (!variant.noPolicy) policy.get();
    insert.run(id, 'handup', 'admin', 'pending', 'command', 'bench', 'bench-session', key, null, 'sha256:x', n, null, null, row, null, null, null);
    if (!variant.noAudit) audit.run(id, 'created', 'admin', n, null);
  };
}

const work = mkdtempSync(join(tmpdir(), 'countersign-create-sql-'));
try {
  const runs = Object.entries(VARIANTS).map(([name, variant], i) => ({ name, ...open(mkdtempSync(join(work, `v${i}-`)), variant) }));
  for (let r = 0; r < ROUNDS; r++) for (const run of r % 2 ? [...runs].reverse() : runs) run.round();
  const base = runs[0].microsPerCreate();
  console.log(`create SQL, ${ROUNDS * PER_ROUND} creates per variant, in batches of ${BATCH}`);
  for (const run of runs) {
    const us = run.microsPerCreate();
    console.log(`${run.name.padEnd(58)} ${us.toFixed(2).padStart(6)} µs per create${run === runs[0] ? '' : `  (${(us - base).toFixed(2)} µs)`}`);
    run.db.close();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

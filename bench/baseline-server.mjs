// The bare baselines the benchmark compares countersign with: Fastify in one process, validating
// a similar body with Fastify's own JSON-schema validator and committing a request row plus an
// outbox row, storing and broadcasting records of the same size and shape as a handup Request.
// No auth, no audit, no record building: the floor the daemon is measured against.
//
// BASELINE_MODE picks how it commits:
// - `per-request` (SQLite, better-sqlite3): one BEGIN IMMEDIATE transaction, so one fsync, per
//   request.
// - `group` (SQLite): requests that arrive in the same event-loop turn share one BEGIN IMMEDIATE
//   transaction and one fsync, each in its own savepoint, and nobody is answered before the
//   COMMIT: the same scheme as the daemon's SQLite write queue, so this is the limit of durable
//   submits on the machine.
// - `postgres` (node-postgres, BASELINE_PG_URL): one transaction per request on a pooled
//   connection (BASELINE_PG_POOL, default 10, the daemon's default pool size).
// Both SQLite modes use the same `synchronous` setting (BASELINE_SYNCHRONOUS).
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { WebSocketServer } from 'ws';
import { buildRecord } from './request-shape.mjs';

const mode = process.env.BASELINE_MODE ?? 'per-request';
const app = Fastify();

const decision = (option) =>
  JSON.stringify({
    option,
    content_hash: `sha256:${'0'.repeat(64)}`,
    outcome: 'approve',
    feedback: null,
    fields: null,
    decided_by: 'admin',
    decided_at: Date.now(),
  });

/** `{create(body) → {status, record}, decide(id, option) → record | undefined, close()}` */
async function openStorage() {
  if (mode === 'postgres') return openPostgres();
  const { default: Database } = await import('better-sqlite3');
  const synchronous = process.env.BASELINE_SYNCHRONOUS === 'normal' ? 'NORMAL' : 'FULL';
  const db = new Database(process.env.BASELINE_DB);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.exec(`
    CREATE TABLE IF NOT EXISTS requests (id TEXT PRIMARY KEY, dedupe_key TEXT, status TEXT NOT NULL, record TEXT NOT NULL, created_at INTEGER NOT NULL);
    CREATE UNIQUE INDEX IF NOT EXISTS requests_dedupe ON requests (dedupe_key) WHERE status = 'pending' AND dedupe_key IS NOT NULL;
    CREATE TABLE IF NOT EXISTS outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, request_id TEXT NOT NULL, payload TEXT NOT NULL, next_attempt_at INTEGER NOT NULL);
  `);
  const findPending = db.prepare("SELECT record FROM requests WHERE dedupe_key = ? AND status = 'pending'");
  const insertRequest = db.prepare('INSERT INTO requests (id, dedupe_key, status, record, created_at) VALUES (?, ?, ?, ?, ?)');
  const insertOutbox = db.prepare('INSERT INTO outbox (request_id, payload, next_attempt_at) VALUES (?, ?, ?)');
  const decide = db.prepare(
    "UPDATE requests SET status = 'approved', record = json_set(record, '$.status', 'approved', '$.decision', json(?)) WHERE id = ? AND status = 'pending' RETURNING record",
  );
  const create = (body) => {
    if (body.dedupe_key) {
      const hit = findPending.get(body.dedupe_key);
      if (hit) return { status: 200, record: hit.record };
    }
    const now = Date.now();
    const id = randomUUID();
    const record = buildRecord(id, body, now);
    insertRequest.run(id, body.dedupe_key ?? null, 'pending', record, now);
    insertOutbox.run(id, record, now);
    return { status: 201, record };
  };
  const applyDecision = (id, option) => {
    const row = decide.get(decision(option), id);
    if (row) insertOutbox.run(id, row.record, Date.now());
    return row?.record;
  };
  const close = () => db.close();

  if (mode !== 'group') {
    const createTx = db.transaction(create);
    const decideTx = db.transaction(applyDecision);
    return { create: async (body) => createTx.immediate(body), decide: async (id, option) => decideTx.immediate(id, option), close };
  }

  // Group commit: one transaction per event-loop turn, a savepoint per request.
  const stmt = (sql) => db.prepare(sql);
  const tx = { begin: stmt('BEGIN IMMEDIATE'), commit: stmt('COMMIT'), sp: stmt('SAVEPOINT w'), release: stmt('RELEASE w'), rollbackTo: stmt('ROLLBACK TO w') };
  let queue = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const ops = queue;
    queue = [];
    tx.begin.run();
    for (const op of ops) {
      tx.sp.run();
      try {
        op.value = op.fn();
        tx.release.run();
      } catch (err) {
        tx.rollbackTo.run();
        tx.release.run();
        op.error = err;
      }
    }
    tx.commit.run();
    for (const op of ops) {
      if (op.error) op.reject(op.error);
      else op.resolve(op.value);
    }
  };
  const enqueue = (fn) =>
    new Promise((resolve, reject) => {
      queue.push({ fn, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
  return { create: (body) => enqueue(() => create(body)), decide: (id, option) => enqueue(() => applyDecision(id, option)), close };
}

async function openPostgres() {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: process.env.BASELINE_PG_URL, max: Number(process.env.BASELINE_PG_POOL ?? 10) });
  await pool.query(`
    DROP TABLE IF EXISTS baseline_requests, baseline_outbox;
    CREATE TABLE baseline_requests (id TEXT PRIMARY KEY, dedupe_key TEXT, status TEXT NOT NULL, record TEXT NOT NULL, created_at BIGINT NOT NULL);
    CREATE UNIQUE INDEX baseline_requests_dedupe ON baseline_requests (dedupe_key) WHERE status = 'pending' AND dedupe_key IS NOT NULL;
    CREATE TABLE baseline_outbox (id BIGSERIAL PRIMARY KEY, request_id TEXT NOT NULL, payload TEXT NOT NULL, next_attempt_at BIGINT NOT NULL);
  `);
  const inTx = async (fn) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const value = await fn(client);
      await client.query('COMMIT');
      return value;
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
  };
  const findPending = async (client, key) =>
    (await client.query("SELECT record FROM baseline_requests WHERE dedupe_key = $1 AND status = 'pending'", [key])).rows[0]?.record;
  return {
    async create(body) {
      try {
        return await inTx(async (client) => {
          if (body.dedupe_key) {
            const hit = await findPending(client, body.dedupe_key);
            if (hit) return { status: 200, record: hit };
          }
          const now = Date.now();
          const id = randomUUID();
          const record = buildRecord(id, body, now);
          await client.query('INSERT INTO baseline_requests (id, dedupe_key, status, record, created_at) VALUES ($1, $2, $3, $4, $5)', [
            id,
            body.dedupe_key ?? null,
            'pending',
            record,
            now,
          ]);
          await client.query('INSERT INTO baseline_outbox (request_id, payload, next_attempt_at) VALUES ($1, $2, $3)', [id, record, now]);
          return { status: 201, record };
        });
      } catch (err) {
        // A concurrent create with the same dedupe key won the unique index: answer with its record.
        if (err.code !== '23505') throw err;
        return { status: 200, record: await findPending(pool, body.dedupe_key) };
      }
    },
    decide: (id, option) =>
      inTx(async (client) => {
        const row = (
          await client.query(
            "UPDATE baseline_requests SET status = 'approved', record = jsonb_set(jsonb_set(record::jsonb, '{status}', '\"approved\"'), '{decision}', $1::jsonb)::text WHERE id = $2 AND status = 'pending' RETURNING record",
            [decision(option), id],
          )
        ).rows[0];
        if (row) await client.query('INSERT INTO baseline_outbox (request_id, payload, next_attempt_at) VALUES ($1, $2, $3)', [id, row.record, Date.now()]);
        return row?.record;
      }),
    close: () => pool.end(),
  };
}

const storage = await openStorage();
const bodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['title'],
  properties: {
    title: { type: 'string', maxLength: 512 },
    summary: { type: 'string', maxLength: 65536 },
    kind: { enum: ['command', 'edit', 'review', 'question', 'info', 'custom'] },
    risk: { enum: ['low', 'medium', 'high'] },
    dedupe_key: { type: 'string', maxLength: 512 },
    timeout: { type: 'string', maxLength: 32 },
    callback_url: { type: 'string', maxLength: 2048 },
    source: { type: 'object', additionalProperties: { type: ['string', 'null'] } },
    previews: { type: 'array', maxItems: 64, items: { type: 'object' } },
  },
};
app.post('/v1/requests', { schema: { body: bodySchema } }, async (req, reply) => {
  const { status, record } = await storage.create(req.body);
  return reply.code(status).type('application/json').send(record);
});

const sockets = new Set();
app.post('/v1/requests/:id/decision', async (req, reply) => {
  const record = await storage.decide(req.params.id, req.body?.option);
  if (!record) return reply.code(409).send({ error: 'not pending' });
  const message = Buffer.from(`{"type":"request.decided","request":${record},"format":"handup"}`);
  for (const ws of sockets) ws.send(message, { binary: false });
  return reply.type('application/json').send(record);
});

const wss = new WebSocketServer({ noServer: true });
app.server.on('upgrade', (req, socket, head) => {
  wss.handleUpgrade(req, socket, head, (ws) => {
    sockets.add(ws);
    ws.on('close', () => sockets.delete(ws));
  });
});

await app.listen({ host: '127.0.0.1', port: Number(process.env.BASELINE_PORT ?? 0) });
process.stdout.write(`baseline listening on http://127.0.0.1:${app.server.address().port}\n`);
process.on('SIGTERM', async () => {
  for (const ws of sockets) ws.terminate();
  await app.close();
  await storage.close();
  process.exit(0);
});

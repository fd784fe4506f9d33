// The bare baseline the benchmark compares countersign with: Fastify + better-sqlite3 in one
// process, validating a similar body with Fastify's own JSON-schema validator and committing a
// request row plus an outbox row in one BEGIN IMMEDIATE transaction, with the same
// `synchronous` setting. Decisions are one conditional UPDATE (+ outbox row) then a raw `ws`
// broadcast. No auth, no audit, no record building: the floor the daemon is measured against.
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { WebSocketServer } from 'ws';

const dbPath = process.env.BASELINE_DB;
const synchronous = process.env.BASELINE_SYNCHRONOUS === 'normal' ? 'NORMAL' : 'FULL';
const db = new Database(dbPath);
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

// The stored row has the size and shape of a served handup Request (defaults filled in), so the
// rows written and the messages broadcast weigh what countersign's do.
const DEFAULTS = {
  tool: null,
  callback_url: null,
  summary: null,
  source: { integration: null, agent: null, session: null, cwd: null, repo: null, branch: null, host: null },
  kind: 'custom',
  risk: 'low',
  previews: [],
  options: [
    { id: 'approve', label: 'Approve', outcome: 'approve', style: 'primary' },
    { id: 'deny', label: 'Deny', outcome: 'deny', style: 'danger' },
  ],
  input: null,
  timeout: null,
  on_timeout: 'deny',
  dedupe_key: null,
};
const create = db.transaction((body) => {
  if (body.dedupe_key) {
    const hit = findPending.get(body.dedupe_key);
    if (hit) return { status: 200, record: hit.record };
  }
  const now = Date.now();
  const id = randomUUID();
  const record = JSON.stringify({
    id,
    ...DEFAULTS,
    ...body,
    source: { ...DEFAULTS.source, ...body.source },
    status: 'pending',
    content_hash: `sha256:${'0'.repeat(64)}`,
    created_at: now,
    expires_at: null,
    decision: null,
  });
  insertRequest.run(id, body.dedupe_key ?? null, 'pending', record, now);
  insertOutbox.run(id, record, now);
  return { status: 201, record };
});
const applyDecision = db.transaction((id, option) => {
  const row = decide.get(decision(option), id);
  if (row) insertOutbox.run(id, row.record, Date.now());
  return row;
});

const app = Fastify();
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
  const { status, record } = create.immediate(req.body);
  return reply.code(status).type('application/json').send(record);
});

const sockets = new Set();
app.post('/v1/requests/:id/decision', async (req, reply) => {
  const row = applyDecision.immediate(req.params.id, req.body?.option);
  if (!row) return reply.code(409).send({ error: 'not pending' });
  const message = Buffer.from(`{"type":"request.decided","request":${row.record},"format":"handup"}`);
  for (const ws of sockets) ws.send(message, { binary: false });
  return reply.type('application/json').send(row.record);
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
  db.close();
  process.exit(0);
});

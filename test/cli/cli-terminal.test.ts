import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inProcessCli, type CliRun } from '../helpers/cli-harness.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Terminal escapes: every string an agent controls reaches the reviewer's
 * terminal through the CLI. None of them may carry a character the terminal acts on.
 */
const ATTACKS = {
  // OSC 52: writes the reviewer's clipboard (here: "rm -rf ~"), then BEL ends it.
  osc52: '\u001b]52;c;cm0gLXJmIH4=\u0007',
  // CSI: clear the screen, cursor home, cursor up: rewrites what was printed above.
  csi: '\u001b[2J\u001b[H\u001b[1A',
  // C1 controls: the one-byte CSI and OSC (with ST) that some terminals honour.
  c1: '\u009b2J\u009d52;c;cm0gLXJmIH4=\u009c',
  // Bidi and invisible format characters: "invoice\u202Efdp.exe" displays as "invoiceexe.pdf".
  bidi: '\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c',
} as const;

const HOSTILE = Object.values(ATTACKS).join('');
// Anything a terminal would act on or that reorders text; newlines and tabs are layout.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

function expectTerminalSafe(run: CliRun, what: string) {
  for (const [stream, text] of [
    ['stdout', run.stdout],
    ['stderr', run.stderr],
  ] as const) {
    const m = UNSAFE.exec(text);
    expect(m, `${what} ${stream} printed U+${m?.[0].charCodeAt(0).toString(16).padStart(4, '0')} raw: ${JSON.stringify(text)}`).toBeNull();
  }
}

describe('CLI output never carries terminal escapes (real daemon)', { timeout: 60_000 }, () => {
  let t: TestServer;
  let cli: ReturnType<typeof inProcessCli>;
  beforeEach(async () => {
    t = await startTestServer();
    cli = inProcessCli({ env: { COUNTERSIGN_URL: t.url, COUNTERSIGN_TOKEN: t.adminToken } });
  });
  afterEach(async () => t?.close());

  const tag = (name: string) => `${name}:${HOSTILE}`;

  async function hostileCommandRequest() {
    const created = await t.api.post('/v1/requests', {
      title: `invoice${ATTACKS.bidi}fdp.exe ${ATTACKS.osc52}`,
      summary: `line one\n${ATTACKS.csi}line two${ATTACKS.c1}`,
      kind: 'command',
      options: [
        { id: 'ok', label: tag('label'), outcome: 'approve' },
        { id: 'no', label: 'No', outcome: 'deny' },
      ],
      previews: [
        { type: 'command', command: { shell: `ls ${ATTACKS.osc52}`, cwd: tag('cwd') } },
        { type: 'text', title: tag('preview-title'), inline: `body ${ATTACKS.csi}${ATTACKS.c1}${ATTACKS.bidi}` },
      ],
      source: { agent: tag('agent'), session: tag('session'), session_title: tag('session-title'), repo: tag('repo'), branch: tag('branch') },
    });
    expect(created.status).toBe(201);
    return created.body;
  }

  it.each(Object.entries(ATTACKS))('show and ls print no %s sequence from titles, summaries, previews, labels or source fields', async (_name, attack) => {
    const created = await t.api.post('/v1/requests', {
      title: `title ${attack} end`,
      summary: `summary ${attack}`,
      options: [
        { id: 'go', label: `label ${attack}`, outcome: 'approve' },
        { id: 'stop', label: 'Stop', outcome: 'deny' },
      ],
      previews: [
        { type: 'text', title: `p ${attack}`, inline: `inline ${attack}` },
        { type: 'command', command: { argv: ['echo', attack] } },
      ],
      source: { agent: `agent ${attack}`, host: `host ${attack}` },
    });
    expect(created.status).toBe(201);
    const show = await cli(['show', created.body.id]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('title \uFFFD');
    expectTerminalSafe(show, 'show');
    const ls = await cli(['ls']);
    expect(ls.code).toBe(0);
    expectTerminalSafe(ls, 'ls');
  });

  it('questions, answers and feedback: question text, option labels and descriptions, the outcome line', async () => {
    const created = await t.api.post('/v1/requests', {
      title: 'Pick one',
      kind: 'question',
      input: {
        questions: [
          {
            id: 'q1',
            question: tag('question'),
            options: [{ label: tag('choice'), description: tag('description') }, { label: 'plain' }],
            allow_free_text: true,
          },
        ],
      },
    });
    expect(created.status).toBe(201);
    const show = await cli(['show', created.body.id]);
    expectTerminalSafe(show, 'show');
    const answered = await cli(['answer', created.body.id, '--select', `q1=${tag('choice')}`, '--text', `q1=${tag('text')}`, '-m', tag('feedback')]);
    expect(answered.stderr).toBe('');
    expect(answered.code).toBe(0);
    expectTerminalSafe(answered, 'answer');
    expectTerminalSafe(await cli(['show', created.body.id]), 'show after answer');
  });

  it('the decision line of approve and wait: option label, feedback', async () => {
    const created = await hostileCommandRequest();
    const approved = await cli(['approve', created.id, '-m', `fine ${HOSTILE}`]);
    expect(approved.code).toBe(0);
    expectTerminalSafe(approved, 'approve');
    expectTerminalSafe(await cli(['wait', created.id]), 'wait');
    expectTerminalSafe(await cli(['show', created.id]), 'show');
  });

  it('--json escapes C1 controls and bidi characters as \\u sequences and stays the same JSON value', async () => {
    const created = await hostileCommandRequest();
    for (const args of [
      ['show', created.id, '--json'],
      ['ls', '--json'],
      ['approve', created.id, '--json', '-m', HOSTILE],
      ['wait', created.id, '--json'],
    ]) {
      const run = await cli(args);
      expectTerminalSafe(run, args.join(' '));
      expect(run.stdout).toContain('\\u202e');
      expect(run.stdout).toContain('\\u009b');
      const value = JSON.parse(run.stdout);
      const record = Array.isArray(value) ? value[0] : value;
      if (args[0] !== 'wait') expect(record.title ?? record.request?.title).toBe(created.title);
    }
  });

  it('error messages that echo agent input are cleaned too (a --request file from an agent)', async () => {
    const run = await cli(['ask', '--request', '-'], JSON.stringify({ title: 'x', [`field${HOSTILE}`]: 1 }));
    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/^countersign: invalid_request: field\uFFFD/);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expectTerminalSafe(run, 'ask');
  });
});

/**
 * Option and question ids: the daemon now refuses unsafe ids at creation, but records stored
 * before that rule, or a daemon at another --url, can still send them. This server answers
 * like a daemon holding such a record, so only the CLI's own handling is under test.
 */
describe('CLI output never carries terminal escapes (ids from a daemon that stored them)', () => {
  let server: Server;
  let url: string;
  const ID = '01JAAAAAAAAAAAAAAAAAAAAAAA';
  const record = {
    id: ID,
    status: 'pending',
    title: 'Deploy',
    summary: null,
    kind: 'question',
    risk: 'low',
    source: {},
    previews: [],
    options: [
      { id: `submit${ATTACKS.osc52}`, label: 'Submit', outcome: 'approve' },
      { id: `decline${ATTACKS.csi}${ATTACKS.c1}${ATTACKS.bidi}`, label: 'Decline', outcome: 'deny' },
    ],
    input: { questions: [{ id: `env${ATTACKS.osc52}`, question: 'Where?', options: [{ label: 'staging' }] }] },
    timeout: null,
    on_timeout: 'expire',
    expires_at: null,
    created_at: 1_700_000_000_000,
    content_hash: 'sha256:0000000000000000000000000000000000000000000000000000000000000000',
    decision: null,
  };
  const decided = {
    ...record,
    status: 'denied',
    decision: {
      option: record.options[1]!.id,
      outcome: 'deny',
      feedback: null,
      decided_by: `admin${ATTACKS.osc52}`,
      decided_at: 1_700_000_000_000,
      content_hash: record.content_hash,
    },
  };

  beforeEach(async () => {
    server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'GET' && req.url === `/v1/requests/${ID}`) return void res.end(JSON.stringify(record));
      if (req.method === 'POST' && req.url === `/v1/requests/${ID}/decision`) {
        let body = '';
        req
          .on('data', (c) => (body += c))
          .on('end', () => {
            if (JSON.parse(body).fields) {
              res.statusCode = 400;
              return void res.end(
                JSON.stringify({ error: `fields.answers.env${ATTACKS.osc52}: every question must be answered`, code: `invalid_decision${ATTACKS.csi}` }),
              );
            }
            res.end(JSON.stringify(decided));
          });
        return;
      }
      res.statusCode = 404;
      res.end(JSON.stringify({ error: 'no such route', code: 'not_found' }));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const run = (args: string[]) => inProcessCli({ env: { COUNTERSIGN_URL: url, COUNTERSIGN_TOKEN: 'token-for-the-test' } })(args);

  it('show: option ids (OSC 52, CSI, C1, bidi) and question ids', async () => {
    const show = await run(['show', ID]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('options: submit\uFFFD]52;c;');
    expectTerminalSafe(show, 'show');
    expectTerminalSafe(await run(['show', ID, '--json']), 'show --json');
  });

  it('deny prints the chosen option id and decided_by cleaned', async () => {
    const deny = await run(['deny', ID]);
    expect(deny.code).toBe(1);
    expectTerminalSafe(deny, 'deny');
  });

  it('a local error listing option ids, and a daemon error echoing a question id, stay one clean line', async () => {
    const wrong = await run(['approve', ID, '--option', 'nope']);
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toMatch(/^countersign: usage: --option: "nope" is not an option/);
    expectTerminalSafe(wrong, 'approve --option');
    const echoed = await run(['answer', ID, '--select', 'x=staging']);
    expect(echoed.code).toBe(4);
    expect(echoed.stderr).toMatch(/^countersign: invalid_decision\uFFFD\[2J/);
    expect(echoed.stderr.trimEnd().split('\n')).toHaveLength(1);
    expectTerminalSafe(echoed, 'answer');
  });
});

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sessionGrantOnlyPermission } from '../helpers/fixtures.js';
import { createRequest, decide, show } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Decide hooks with real child programs and a real loopback HTTP service: they
 * decide through the normal path, in order, off the request path, and every failure leaves the
 * request pending (audited `hook.failed`), never approved.
 */

let dir: string;
const script = (name: string, body: string) => {
  const path = join(dir, name);
  writeFileSync(path, body);
  return [process.execPath, path];
};
/** A program that records its stdin and environment in `<name>.seen.json`, then prints `output`. */
const answering = (name: string, output: string, exitCode = 0) =>
  script(
    `${name}.mjs`,
    `import { readFileSync, writeFileSync } from 'node:fs';
const input = readFileSync(0, 'utf8');
writeFileSync(${JSON.stringify(join('DIR', `${name}.seen.json`))}.replace('DIR', process.argv[2] ?? ''), JSON.stringify({ input: JSON.parse(input), hook: process.env.COUNTERSIGN_HOOK, id: process.env.COUNTERSIGN_REQUEST_ID, admin: process.env.COUNTERSIGN_ADMIN_TOKEN ?? null }));
process.stdout.write(${JSON.stringify(output)});
process.exit(${exitCode});
`,
  ).concat(dir);
const seen = (name: string) => {
  const path = join(dir, `${name}.seen.json`);
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : null;
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'countersign-hooks-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let t: TestServer | undefined;
let service: Server | undefined;
afterEach(async () => {
  await t?.close();
  service?.close();
  t = service = undefined;
  for (const f of ['approver', 'silent', 'second', 'never', 'filtered'].map((n) => join(dir, `${n}.seen.json`))) rmSync(f, { force: true });
});

const audit = async (id: string) => (await t!.api.get(`/v1/requests/${id}/audit`)).body as Array<{ event: string; actor: string; details?: any }>;
/** Creates a request (answered at once: hooks run off the request path), then waits for its hooks. */
async function createAndSettle(body: Record<string, unknown>) {
  const created = await createRequest(t!.api, body);
  expect(created.status).toBe('pending');
  await t!.server.hooksIdle();
  return { created, now: await show(t!.api, created.id) };
}

/** A loopback service answering each POST with `respond`. */
async function startService(respond: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<string> {
  service = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => respond(req, body, res));
  });
  await new Promise<void>((resolve) => service!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(service.address() as AddressInfo).port}/v1/data/countersign/decision`;
}

describe('exec decide hooks', () => {
  it('decide through the normal path as hook:<name>, with the Request on stdin and no daemon secrets in the environment', async () => {
    process.env.COUNTERSIGN_ADMIN_TOKEN = 'must-not-reach-hooks-0123456789';
    try {
      t = await startTestServer({
        decide_hooks: [{ name: 'spend-policy', exec: answering('approver', '{"option":"approve","feedback":"within budget"}') }] as never,
      });
    } finally {
      delete process.env.COUNTERSIGN_ADMIN_TOKEN;
    }
    const { created, now } = await createAndSettle({ title: 'Buy a domain', tool: 'spend.purchase' });
    expect(now.status).toBe('approved');
    expect(now.decision).toMatchObject({ option: 'approve', feedback: 'within budget', decided_by: 'hook:spend-policy', content_hash: created.content_hash });
    const input = seen('approver');
    expect(input).toMatchObject({ hook: 'spend-policy', id: created.id, admin: null });
    expect(input.input).toEqual(created);
    expect((await audit(created.id)).map((a) => [a.event, a.actor])).toEqual([
      ['created', 'admin'],
      ['decided', 'hook:spend-policy'],
    ]);
  });

  it('run in order until one decides: no opinion goes on, a match filter skips a hook', async () => {
    t = await startTestServer({
      decide_hooks: [
        { name: 'filtered', exec: answering('filtered', '{"option":"deny"}'), match: { tool: 'spend.*' } },
        { name: 'silent', exec: answering('silent', '  \n') },
        { name: 'second', exec: answering('second', '{"option":"deny","feedback":"no"}') },
        { name: 'never', exec: answering('never', '{"option":"approve"}') },
      ] as never,
    });
    const { now } = await createAndSettle({ title: 'Open a port', tool: 'net.listen' });
    expect(now.decision).toMatchObject({ option: 'deny', decided_by: 'hook:second', feedback: 'no' });
    expect([seen('filtered'), seen('silent') !== null, seen('second') !== null, seen('never')]).toEqual([null, true, true, null]);
  });

  it("a hook's command match holds for every command the request shows, as an approve rule's does", async () => {
    t = await startTestServer({
      decide_hooks: [{ name: 'status-ok', exec: answering('status-ok', '{"option":"approve"}'), match: { command: '^git status$' } }] as never,
    });
    const shows = (...commands: string[]) => ({ title: 'Run', kind: 'command', previews: commands.map((shell) => ({ type: 'command', command: { shell } })) });
    const mixed = await createAndSettle(shows('git status', 'rm -rf /'));
    expect(mixed.now.status).toBe('pending');
    expect(seen('status-ok')).toBeNull();
    const alone = await createAndSettle(shows('git status'));
    expect(alone.now.decision).toMatchObject({ option: 'approve', decided_by: 'hook:status-ok' });
  });

  it('do not run for requests rules or auto mode already decided', async () => {
    t = await startTestServer({
      rules: [{ id: 'ok', match: { title: '^Fine' }, action: 'approve' }] as never,
      decide_hooks: [{ name: 'never', exec: answering('never', '{"option":"deny"}') }] as never,
    });
    const decided = await createRequest(t.api, { title: 'Fine thing' });
    await t.server.hooksIdle();
    expect((await show(t.api, decided.id)).decision.decided_by).toBe('rule');
    expect(seen('never')).toBeNull();
  });

  it('never approve what a deny rule matched: a required-feedback request is denied by the rule, one it cannot decide waits for a person', async () => {
    t = await startTestServer({
      rules: [{ id: 'no-deploys', match: { title: '^Deploy' }, action: 'deny' }] as never,
      decide_hooks: [{ name: 'never', exec: answering('never', '{"option":"approve"}') }] as never,
    });
    // The agent asks for feedback on a deny, which the rule does not give: it still denies.
    const required = await createRequest(t.api, { title: 'Deploy now', input: { feedback: 'required_on_deny' } });
    expect(required).toMatchObject({ status: 'denied', decision: { decided_by: 'rule', rule_id: 'no-deploys', feedback: 'Denied by rule no-deploys.' } });
    // No deny option for the rule to pick: pending, for a person, not for the approving hook.
    const { now } = await createAndSettle({ title: 'Deploy later', options: [{ id: 'go', label: 'Go', outcome: 'approve' }] });
    expect(now.status).toBe('pending');
    expect(seen('never')).toBeNull();
    expect((await audit(now.id)).map((a) => [a.event, a.actor])).toEqual([
      ['created', 'admin'],
      ['rule.skipped', 'rule:no-deploys'],
    ]);
  });

  const approveAfter = () => ({ name: 'never', exec: answering('never', '{"option":"approve"}') });
  it.each([
    ['bad JSON', () => script('bad.mjs', "process.stdout.write('yes please')"), 'bad_answer'],
    [
      'a decision object with other fields',
      () => script('extra.mjs', 'process.stdout.write(JSON.stringify({ option: "approve", scope: "always" }))'),
      'bad_answer',
    ],
    [
      'a non-zero exit (even with an approval on stdout)',
      () => script('exit.mjs', 'process.stdout.write(JSON.stringify({ option: "approve" })); process.exit(3)'),
      'exit',
    ],
    ['a crash', () => script('crash.mjs', 'throw new Error("boom")'), 'exit'],
    ['a timeout', () => script('hang.mjs', 'setInterval(() => {}, 1000)'), 'timeout'],
    ['an unknown option', () => script('unknown.mjs', 'process.stdout.write(JSON.stringify({ option: "yes-please" }))'), 'refused'],
    [
      'a refused decision (deny without the feedback it requires)',
      () => script('nofeedback.mjs', 'process.stdout.write(JSON.stringify({ option: "deny" }))'),
      'refused',
    ],
    ['an answer over 64 KiB', () => script('big.mjs', 'process.stdout.write(JSON.stringify({ option: "approve", feedback: "x".repeat(70000) }))'), 'too_large'],
    ['a program that does not exist', () => [join(dir, 'no-such-program')], 'spawn'],
  ])('fail closed on %s: the request stays pending, hook.failed is audited, later hooks do not run', async (_name, program, reason) => {
    // Only the hanging program meets its timeout; the others answer long before theirs.
    const timeout = reason === 'timeout' ? '300ms' : '30s';
    t = await startTestServer({ decide_hooks: [{ name: 'flaky', exec: program(), timeout }, approveAfter()] as never });
    const { created, now } = await createAndSettle({ title: 'Risky', input: { feedback: 'required_on_deny' } });
    expect(now.status).toBe('pending');
    const rows = await audit(created.id);
    expect(rows.map((a) => [a.event, a.actor])).toEqual([
      ['created', 'admin'],
      ['hook.failed', 'hook:flaky'],
    ]);
    expect(rows[1]!.details).toMatchObject({ hook: 'flaky', reason });
    expect(seen('never')).toBeNull();
  });

  it('time out a program whose own child keeps its output open: the child is killed too, the request stays pending', async () => {
    // The program answers, then exits leaving a child that holds its stdout for two minutes:
    // the answer is never complete, so the hook's timeout must end it (and the child), not wait.
    const orphaning = script(
      'orphaning.mjs',
      `import { spawn } from 'node:child_process';
const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], { stdio: ['ignore', 'inherit', 'inherit'] });
child.unref();
process.stdout.write(JSON.stringify({ option: 'approve' }));
`,
    );
    t = await startTestServer({ decide_hooks: [{ name: 'orphaning', exec: orphaning, timeout: '5s' }] as never });
    const { created, now } = await createAndSettle({ title: 'Risky' });
    expect(now.status).toBe('pending');
    // Settled at all: the child holding the output was killed with the program.
    expect((await audit(created.id)).at(-1)).toMatchObject({ event: 'hook.failed', details: { hook: 'orphaning', reason: 'timeout' } });
  });
});

describe('decide hooks and a grant for the whole session', () => {
  it('never see or choose an option only a person may choose: choosing it is refused, and a person decides', async () => {
    t = await startTestServer({
      decide_hooks: [{ name: 'granter', exec: answering('approver', '{"option":"accept_for_session"}') }] as never,
    });
    const frame = sessionGrantOnlyPermission('wide-1');
    const res = await t.api.post('/v1/formats/paperclip/requests', frame);
    expect(res.status, res.text).toBe(201);
    const id = res.body.request.id as string;
    await t.server.hooksIdle();
    const now = await show(t.api, id);
    expect(now.status).toBe('pending');
    // The hook was handed the request without the grant it may not give.
    expect(seen('approver').input.options.map((o: { id: string }) => o.id)).toEqual(['decline']);
    expect((await audit(id)).at(-1)).toMatchObject({ event: 'hook.failed', actor: 'hook:granter', details: { reason: 'refused' } });
  });
});

describe('url decide hooks', () => {
  it('POST {"input": Request} and understand an Open Policy Agent {"result": …} answer', async () => {
    const bodies: any[] = [];
    const url = await startService((req, body, res) => {
      bodies.push({ method: req.method, type: req.headers['content-type'], body: JSON.parse(body) });
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ decision_id: 'd1', result: { option: 'deny', feedback: 'policy says no' } }));
    });
    t = await startTestServer({ decide_hooks: [{ name: 'opa', url, match: { kind: 'command' } }] as never });
    const { created, now } = await createAndSettle({ title: 'rm -rf build', kind: 'command' });
    expect(now.decision).toMatchObject({ option: 'deny', feedback: 'policy says no', decided_by: 'hook:opa' });
    expect(bodies).toEqual([{ method: 'POST', type: 'application/json', body: { input: created } }]);
  });

  it.each([
    ['204', (res: ServerResponse) => res.writeHead(204).end()],
    ['{"result": null}', (res: ServerResponse) => res.writeHead(200).end('{"result":null}')],
    ['an undefined OPA decision ({})', (res: ServerResponse) => res.writeHead(200).end('{}')],
  ])('%s is no opinion: the next hook decides', async (_name, answer) => {
    const url = await startService((_req, _body, res) => answer(res));
    t = await startTestServer({
      decide_hooks: [
        { name: 'opa', url },
        { name: 'second', exec: answering('second', '{"option":"approve"}') },
      ] as never,
    });
    const { now } = await createAndSettle({ title: 'Something' });
    expect(now.decision).toMatchObject({ decided_by: 'hook:second' });
  });

  it.each([
    ['a redirect (never followed)', (res: ServerResponse) => res.writeHead(307, { location: 'http://127.0.0.1:1/elsewhere' }).end(), 'http'],
    ['HTTP 500', (res: ServerResponse) => res.writeHead(500).end('{"result":{"option":"approve"}}'), 'http'],
    ['a result that is not a decision', (res: ServerResponse) => res.writeHead(200).end('{"result":{"allow":true}}'), 'bad_answer'],
  ])('fail closed on %s', async (_name, answer, reason) => {
    const url = await startService((_req, _body, res) => answer(res));
    t = await startTestServer({ decide_hooks: [{ name: 'opa', url }] as never });
    const { created, now } = await createAndSettle({ title: 'Something' });
    expect(now.status).toBe('pending');
    expect((await audit(created.id)).at(-1)).toMatchObject({ event: 'hook.failed', actor: 'hook:opa', details: { reason } });
  });

  it('a hook that answers after a person decided is ignored', async () => {
    let release: () => void = () => {};
    let asked: () => void = () => {};
    const hookAsked = new Promise<void>((resolve) => (asked = resolve));
    const url = await startService((_req, _body, res) => {
      release = () => res.writeHead(200).end('{"option":"deny","feedback":"too late"}');
      asked();
    });
    t = await startTestServer({ decide_hooks: [{ name: 'slow', url }] as never });
    const created = await createRequest(t.api, { title: 'Race' });
    await hookAsked;
    expect((await decide(t.api, created, 'approve')).status).toBe(200);
    release();
    await t.server.hooksIdle();
    const now = await show(t.api, created.id);
    expect(now.decision).toMatchObject({ option: 'approve', decided_by: 'admin' });
    expect((await audit(created.id)).map((a) => a.event)).toEqual(['created', 'decided']);
  });
});

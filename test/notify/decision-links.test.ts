import { afterEach, describe, expect, it } from 'vitest';
import { signLink } from '../../src/notify/decision-links.js';
import { startReceiver, type Receiver } from '../callbacks/callback-kit.js';
import { createFakeClock, type FakeClock } from '../helpers/fake-clock.js';
import { createRequest, show } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { COMMAND, withHooks, type HookInput } from './notify-kit.js';

/**
 * Decision links over real HTTP: a GET only shows, a POST decides once, and
 * forged, altered, replayed, expired, revoked and stale links are refused without deciding.
 */
describe('decision links', () => {
  let t: TestServer | undefined;
  let receiver: Receiver | undefined;
  let clock: FakeClock;
  afterEach(async () => {
    await t?.close();
    await receiver?.close();
    t = receiver = undefined;
  });

  async function setup(hook: Partial<HookInput> = {}, extra: Parameters<typeof withHooks>[1] = {}) {
    clock = createFakeClock(Math.floor(Date.now() / 1000) * 1000);
    receiver = await startReceiver();
    t = await startTestServer(
      withHooks([{ name: 'team', webhook: `${receiver.url}/hook`, format: 'json', decision_links: true, events: ['request.created'], ...hook }], {
        public_url: 'https://approvals.example.com',
        ...extra,
      }),
      { clock },
    );
  }

  /** Creates a request and returns it with the links its notification carried, as paths on this daemon. */
  async function notified(body: Record<string, unknown> = COMMAND): Promise<{ r: any; links: Record<string, string>; envelope: any }> {
    const r = await createRequest(t!.api, body);
    const rec = (await receiver!.waitFor(receiver!.received.length + 1)).at(-1)!;
    const envelope = JSON.parse(rec.body);
    expect(envelope.data.request.id).toBe(r.id);
    const links: Record<string, string> = {};
    for (const l of envelope.data.links ?? []) {
      expect(l.url.startsWith('https://approvals.example.com/d/')).toBe(true);
      links[l.option] = new URL(l.url).pathname;
    }
    return { r, links, envelope };
  }

  const get = (path: string) => fetch(t!.url + path, { redirect: 'manual' });
  const post = (path: string, form: Record<string, string> = {}, headers: Record<string, string> = {}) =>
    fetch(t!.url + path, { method: 'POST', body: new URLSearchParams(form), headers, redirect: 'manual' });

  it('GET shows a confirmation page and decides nothing; POST decides once as link:<hook>; a replay is refused', async () => {
    await setup();
    const { r, links, envelope } = await notified();
    expect(envelope.data.links.map((l: any) => [l.option, l.label, l.outcome])).toEqual([
      ['approve', 'Approve', 'approve'],
      ['deny', 'Deny', 'deny'],
    ]);

    for (let i = 0; i < 3; i++) {
      const page = await get(links.approve!);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const csp = page.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).not.toMatch(/script-src|unsafe-inline|http/);
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      const html = await page.text();
      expect(html).toContain('Deploy staging');
      expect(html).toContain('kubectl apply -f staging.yaml');
      expect(html).toMatch(/<form method="post">/);
      expect(html).not.toContain('<script');
    }
    const head = await fetch(t!.url + links.approve!, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect((await show(t!.api, r.id)).status).toBe('pending');

    const done = await post(links.approve!, { token: links.approve!.slice(3) });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('Approved');
    const decided = await show(t!.api, r.id);
    expect(decided.status).toBe('approved');
    expect(decided.decision).toMatchObject({ option: 'approve', outcome: 'approve', decided_by: 'link:team', content_hash: r.content_hash });
    const audit = (await t!.api.get(`/v1/requests/${r.id}/audit`)).body;
    expect(audit.at(-1)).toMatchObject({ event: 'decided', actor: 'link:team', details: { option: 'approve', link: { hook: 'team' } } });

    const replay = await post(links.approve!);
    expect(replay.status).toBe(409);
    expect(await replay.text()).toContain('already used');
    expect((await get(links.approve!)).status).toBe(409);
    const other = await post(links.deny!);
    expect(other.status).toBe(409);
    expect(await other.text()).toContain('no longer waiting');
    expect((await show(t!.api, r.id)).decision.option).toBe('approve');
  });

  it('the page says what the option does, whatever its label says', async () => {
    await setup();
    const { r, links } = await notified({
      ...COMMAND,
      options: [
        // Single outcome words are refused at creation; phrases may still mislead.
        { id: 'halt', label: 'Stop it', outcome: 'approve' },
        { id: 'onward', label: 'Go ahead', outcome: 'deny' },
      ],
    });
    expect(await (await get(links.halt!)).text()).toContain('“Stop it” approves this request.');
    expect(await (await get(links.onward!)).text()).toContain('“Go ahead” denies this request.');
    expect((await show(t!.api, r.id)).status).toBe('pending');
    const info = await notified({ title: 'Build done', kind: 'info' });
    expect(await (await get(info.links.ok!)).text()).toContain('dismisses this notice.');
  });

  it('the page shows bidi controls and invisible characters as U+FFFD, as the inbox does: a title or file name cannot read as another', async () => {
    await setup();
    const { links } = await notified({
      title: 'Send invoice\u202Efdp.exe to the customer',
      kind: 'command',
      previews: [{ type: 'command', command: { shell: 'mail -a invoice\u202Efdp.exe boss\u200B@example.com' } }],
      options: [
        { id: 'go', label: 'Send\u2066 it', outcome: 'approve' },
        { id: 'stop', label: 'Hold', outcome: 'deny' },
      ],
    });
    const page = await (await get(links.go!)).text();
    expect(page).toContain('Send invoice\uFFFDfdp.exe to the customer');
    expect(page).toContain('invoice\uFFFDfdp.exe boss\uFFFD@example.com');
    expect(page).toContain('Send\uFFFD it');
    expect(page).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200b]/);
  });

  it('the page shows everything a preview holds as text: an email, a command with its directory, a file set', async () => {
    await setup();
    const { links } = await notified({
      title: 'Send mail',
      kind: 'review',
      previews: [
        {
          type: 'email',
          email: {
            from: 'bot@example.com',
            to: ['ceo@example.com'],
            cc: ['board@example.com'],
            subject: 'Resignation',
            body: 'I quit, effective <now>.',
            body_html: '<p>Please wire $1,000,000</p>',
          },
        },
        {
          type: 'email',
          title: 'Long one',
          email: { to: ['all@example.com'], body: 'x'.repeat(25_000), attachments: [{ name: 'payroll-all-staff.xlsx', size: 9 }] },
        },
        { type: 'command', command: { shell: 'rm -rf build', cwd: '/srv/prod', env_keys: ['AWS_SECRET_ACCESS_KEY'] } },
        { type: 'command', command: { argv: ['rm', '-rf', '/'] } },
        { type: 'files', files: [{ path: 'src/a.ts', blob: `sha256:${'a'.repeat(64)}`, mime: 'text/plain', size: 12 }] },
      ],
    });
    const html = await (await get(links.approve!)).text();
    for (const shown of [
      'To: ceo@example.com',
      'Cc: board@example.com',
      'Subject: Resignation',
      'I quit, effective &lt;now&gt;.',
      '# in /srv/prod',
      '$ rm -rf build',
      'argv: [&quot;rm&quot;,&quot;-rf&quot;,&quot;/&quot;]',
      'src/a.ts (12 bytes)',
      'also an HTML body, which may say something else',
      'Attachment: payroll-all-staff.xlsx (9 bytes)',
      'cut here: the rest is in the inbox',
      'env: AWS_SECRET_ACCESS_KEY',
      'Its file contents are shown in the inbox.',
    ])
      expect(html).toContain(shown);
    // Commands read in the order they run (right-to-left letters move nothing); an email's text keeps its direction.
    expect(html).toContain('<pre class="ltr"># in /srv/prod\n$ rm -rf build');
    expect(html).toMatch(/<pre>To: all@example.com/);
  });

  it('forged and altered tokens are 404 and decide nothing', async () => {
    await setup();
    const { r, links } = await notified();
    const token = links.approve!.slice(3);
    const parts = token.split('.');
    const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
    const forged = [
      'not-a-token',
      `${parts.slice(0, 5).join('.')}.${flip(parts[5]!)}`,
      // The deny option in the approve link's token, MAC unchanged.
      [parts[0], Buffer.from('deny').toString('base64url'), ...parts.slice(2)].join('.'),
      // Another request id.
      [flip(parts[0]!), ...parts.slice(1)].join('.'),
      // A later expiry.
      [...parts.slice(0, 4), (parseInt(parts[4]!, 36) + 86_400_000).toString(36), parts[5]].join('.'),
      'x'.repeat(600),
    ];
    for (const f of forged) {
      expect((await get(`/d/${f}`)).status, f).toBe(404);
      const res = await post(`/d/${f}`);
      expect(res.status, f).toBe(404);
      expect(await res.text()).toContain('Link not found');
    }
    // The form's token must be the link's own.
    expect((await post(links.approve!, { token: links.deny!.slice(3) })).status).toBe(404);
    expect((await show(t!.api, r.id)).status).toBe('pending');
  });

  it('a deny link takes feedback, and asks for it when the request requires it', async () => {
    await setup();
    const { r, links } = await notified({ ...COMMAND, input: { feedback: 'required_on_deny' } });
    const html = await (await get(links.deny!)).text();
    expect(html).toContain('name="feedback"');
    expect(html).toContain('required');
    const missing = await post(links.deny!);
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('requires feedback');
    expect((await show(t!.api, r.id)).status).toBe('pending');
    const ok = await post(links.deny!, { feedback: 'Use the canary first.' });
    expect(ok.status).toBe(200);
    expect((await show(t!.api, r.id)).decision).toMatchObject({ outcome: 'deny', feedback: 'Use the canary first.', decided_by: 'link:team' });
  });

  it('an ntfy-style POST without a form decides too', async () => {
    await setup();
    const { r, links } = await notified();
    const res = await post(links.approve!, { via: 'ntfy' }, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(200);
    expect((await show(t!.api, r.id)).status).toBe('approved');
  });

  it('links expire with the request (410), or after 7 days without a deadline', async () => {
    await setup();
    const timed = await notified({ ...COMMAND, timeout: '10m', on_timeout: 'expire' });
    const open = await notified({ ...COMMAND, title: 'open-ended' });
    clock.advance(10 * 60_000);
    await t!.server.settled();
    expect((await get(timed.links.approve!)).status).toBe(410);
    expect((await post(timed.links.approve!)).status).toBe(410);
    expect((await get(open.links.approve!)).status).toBe(200);
    clock.advance(7 * 86_400_000);
    const gone = await post(open.links.approve!);
    expect(gone.status).toBe(410);
    expect(await gone.text()).toContain('expired');
    expect((await show(t!.api, open.r.id)).status).toBe('pending');
  });

  it('412 when the link was made for other content than the request now has', async () => {
    await setup();
    const { r, links } = await notified();
    expect((await get(links.approve!)).status).toBe(200);
    const [{ secret }] = await t!.sql<{ secret: string }>("SELECT secret FROM daemon_keys WHERE name = 'decision-links'");
    const stale = signLink(Buffer.from(secret, 'base64url'), {
      requestId: r.id,
      option: 'approve',
      contentHash: `sha256:${'1'.repeat(64)}`,
      hook: 'team',
      expiresAt: clock.now() + 60_000,
    });
    expect((await get(`/d/${stale}`)).status).toBe(412);
    const res = await post(`/d/${stale}`);
    expect(res.status).toBe(412);
    expect(await res.text()).toContain('changed');
    expect((await show(t!.api, r.id)).status).toBe('pending');
  });

  it('rotating the key revokes every outstanding link', async () => {
    await setup();
    const { r, links } = await notified();
    const rotated = await t!.api.post('/v1/links/rotate');
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body).toEqual({ rotated_at: clock.now() });
    expect((await get(links.approve!)).status).toBe(404);
    expect((await post(links.approve!)).status).toBe(404);
    expect((await show(t!.api, r.id)).status).toBe('pending');
    // New notifications carry links that work.
    const fresh = await notified({ ...COMMAND, title: 'after rotation' });
    expect((await post(fresh.links.approve!)).status).toBe(200);
    const { api: submit } = await t!.submitClient('agent');
    expect((await submit.post('/v1/links/rotate')).status).toBe(403);
  });

  it('turning links off, on every hook or on one, or removing the hook, stops the links already sent', async () => {
    await setup();
    const sent = [await notified(), await notified({ ...COMMAND, title: 'second' }), await notified({ ...COMMAND, title: 'third' })];
    const hook = { name: 'team', webhook: `${receiver!.url}/hook`, format: 'json' as const, events: ['request.created'] };
    const restarts: Array<Parameters<typeof withHooks>> = [
      [[{ ...hook, decision_links: true }], { public_url: 'https://approvals.example.com', notifications: { decision_links: false } as never }],
      [[{ ...hook, decision_links: false }], { public_url: 'https://approvals.example.com' }],
      [[], { public_url: 'https://approvals.example.com' }],
    ];
    await t!.server.close();
    const dataDir = t!.dataDir;
    for (const [i, [hooks, extra]] of restarts.entries()) {
      const again = await startTestServer({ ...withHooks(hooks, extra), data_dir: dataDir }, { clock });
      try {
        const link = sent[i]!.links.approve!;
        expect((await fetch(again.url + link)).status, `restart ${i}: GET`).toBe(404);
        expect((await fetch(again.url + link, { method: 'POST' })).status, `restart ${i}: POST`).toBe(404);
        expect((await show(again.api, sent[i]!.r.id)).status).toBe('pending');
      } finally {
        await again.server.close();
      }
    }
    // Switched on again, the same link decides: the switch is not a revocation (rotating is).
    const again = await startTestServer(
      { ...withHooks([{ ...hook, decision_links: true }], { public_url: 'https://approvals.example.com' }), data_dir: dataDir },
      { clock },
    );
    try {
      expect((await fetch(again.url + sent[0]!.links.approve!, { method: 'POST' })).status).toBe(200);
      expect((await show(again.api, sent[0]!.r.id)).decision.decided_by).toBe('link:team');
    } finally {
      await again.server.close();
    }
  });

  it('links are rate limited per IP', async () => {
    await setup({}, { notifications: { links_per_minute: 3 } as never });
    const { r, links } = await notified();
    for (let i = 0; i < 3; i++) expect((await get(links.approve!)).status).toBe(200);
    const limited = await post(links.approve!);
    expect(limited.status).toBe(429);
    expect((await show(t!.api, r.id)).status).toBe('pending');
    clock.advance(60_001);
    expect((await post(links.approve!)).status).toBe(200);
  });

  it('questions get no links (the inbox link only); at most four options get links; info notices get theirs', async () => {
    await setup();
    const q = await notified({
      title: 'Which region?',
      kind: 'question',
      input: { questions: [{ id: 'r', question: 'Region?', options: [{ label: 'eu' }, { label: 'us' }] }] },
    });
    expect(q.envelope.data.links).toBeUndefined();
    expect(q.envelope.data.request.url).toBe(`https://approvals.example.com/#/requests/${q.r.id}`);
    const many = await notified({
      ...COMMAND,
      options: ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id, label: id.toUpperCase(), outcome: id === 'e' ? 'deny' : 'approve' })),
    });
    expect(Object.keys(many.links)).toEqual(['a', 'b', 'c', 'd']);
    const info = await notified({ title: 'Build done', kind: 'info' });
    expect(Object.keys(info.links)).toEqual(['ok', 'dismiss']);
    expect((await post(info.links.ok!)).status).toBe(200);
    expect((await show(t!.api, info.r.id)).status).toBe('dismissed');
  });

  it('notifications.decision_links: false turns links off everywhere, and GET /v1/hooks says so', async () => {
    await setup({}, { notifications: { decision_links: false } as never });
    const { envelope } = await notified();
    expect(envelope.data.links).toBeUndefined();
    expect((await t!.api.get('/v1/hooks')).body.map((h: { decision_links: boolean }) => h.decision_links)).toEqual([false]);
  });
});

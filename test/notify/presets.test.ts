import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { SECRET, startReceiver, type ReceivedCallback, type Receiver } from '../callbacks/callback-kit.js';
import { createRequest, decide } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectValidRequest } from '../helpers/upstream-schemas.js';
import { COMMAND, hookDeliveries, settledAll, waitForHookDeliveries, withHooks, type HookInput } from './notify-kit.js';

/**
 * Each preset against a real loopback receiver, from the real daemon: the body each service
 * documents for its incoming webhooks (Slack Block Kit, Discord execute-webhook, a Teams
 * Workflows message with an Adaptive Card, Google Chat cardsV2, ntfy JSON publishing), the
 * JSON envelope, and a Mustache template.
 */
describe('hook presets (loopback receivers)', () => {
  let t: TestServer | undefined;
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await t?.close();
    await receiver?.close();
    t = receiver = undefined;
  });

  async function setup(
    hook: Partial<HookInput> & { format: HookInput['format'] },
    extra: Parameters<typeof withHooks>[1] = {},
    env: Record<string, string> = {},
  ) {
    receiver = await startReceiver();
    t = await startTestServer(
      withHooks([{ name: 'team', webhook: `${receiver.url}/hook/T000/B000/secret-part`, ...hook } as HookInput], {
        public_url: 'https://approvals.example.com',
        ...extra,
      }),
      { env },
    );
    return { t, receiver };
  }

  async function oneMessage(): Promise<{ rec: ReceivedCallback; body: any }> {
    const [rec] = await receiver!.waitFor(1);
    expect(rec!.method).toBe('POST');
    expect(rec!.headers['content-type']).toBe('application/json');
    expect(rec!.headers['webhook-id']).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    return { rec: rec!, body: JSON.parse(rec!.body) };
  }

  it('json: the v1 envelope of a created request, with the inbox link, no content, no secrets', async () => {
    await setup({ format: 'json' });
    const r = await createRequest(t!.api, COMMAND);
    const { rec, body } = await oneMessage();
    expect(rec.path).toBe('/hook/T000/B000/secret-part');
    expect(Object.keys(body)).toEqual(['v', 'type', 'id', 'time', 'data']);
    expect(body).toMatchObject({ v: 1, type: 'request.created', id: rec.headers['webhook-id'], time: new Date(r.created_at).toISOString() });
    expect(Object.keys(body.data)).toEqual(['request']);
    expect(body.data.request).toEqual({
      id: r.id,
      title: 'Deploy staging',
      risk: 'high',
      kind: 'command',
      status: 'pending',
      source: r.source,
      format: 'handup',
      url: `https://approvals.example.com/#/requests/${r.id}`,
    });
    expect(rec.body).not.toContain(t!.adminToken);
    // Unsigned without secret_env: ids and timestamps only.
    expect(rec.headers['webhook-signature']).toBeUndefined();
    const [d] = await waitForHookDeliveries(t!.api, 'team', settledAll);
    expect(d).toMatchObject({ id: body.id, request_id: r.id, type: 'request.created', state: 'delivered', url: `${receiver!.url}/…` });
    expect(d.attempts).toEqual([expect.objectContaining({ n: 1, status: 200, error_class: null })]);
  });

  it('json with include_content and secret_env: summary and previews, the decision, signed like callbacks', async () => {
    await setup({ format: 'json', include_content: true, secret_env: 'AUDIT_SECRET', events: ['request.decided'] }, {}, { AUDIT_SECRET: SECRET });
    const r = await createRequest(t!.api, COMMAND);
    const decided = await decide(t!.api, r, 'deny', { feedback: 'not today' });
    expect(decided.status).toBe(200);
    const { rec, body } = await oneMessage();
    expect(new Webhook(SECRET).verify(rec.body, rec.headers as Record<string, string>)).toEqual(body);
    expect(rec.headers['x-handup-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(body.type).toBe('request.decided');
    expect(body.data.request).toMatchObject({ id: r.id, status: 'denied', summary: COMMAND.summary, previews: r.previews });
    expect(body.data.decision).toEqual(decided.body.decision);
    expect(body.data.decision).toMatchObject({ option: 'deny', feedback: 'not today', decided_by: 'admin' });
    // Only the event the hook asked for was sent.
    await waitForHookDeliveries(t!.api, 'team', settledAll);
    expect(receiver!.received).toHaveLength(1);
  });

  it('slack: text plus Block Kit blocks with link buttons, request text escaped and never styled', async () => {
    await setup({ format: 'slack', decision_links: true, include_content: true });
    const title = 'Deploy <!channel> & *friends* _now_';
    const agent = '*boss* <@U123>';
    const r = await createRequest(t!.api, { ...COMMAND, title, source: { agent } });
    const { body } = await oneMessage();
    expect(Object.keys(body).sort()).toEqual(['blocks', 'mrkdwn', 'text']);
    // The notification line is plain text: mrkdwn off, control characters escaped.
    expect(body.mrkdwn).toBe(false);
    expect(body.text).toBe(
      `Approval needed: Deploy &lt;!channel&gt; &amp; *friends* _now_ (*boss* &lt;@U123&gt;, high risk) https://approvals.example.com/#/requests/${r.id}`,
    );
    const plain = (text: string) => ({ type: 'plain_text', text, emoji: false });
    expect(body.blocks.slice(0, 4)).toEqual([
      { type: 'header', text: plain('Approval needed') },
      { type: 'section', text: plain('Deploy &lt;!channel&gt; &amp; *friends* _now_') },
      { type: 'context', elements: [plain('Agent: *boss* &lt;@U123&gt;  ·  Risk: high  ·  command')] },
      { type: 'section', text: plain(COMMAND.summary.split('\n')[0]!) },
    ]);
    // Nothing the agent wrote reaches a mrkdwn object.
    expect(JSON.stringify(body.blocks)).not.toContain('"mrkdwn"');
    const actions = body.blocks.at(-1);
    expect(actions.type).toBe('actions');
    for (const el of actions.elements) {
      expect(el).toMatchObject({ type: 'button', text: { type: 'plain_text', text: expect.any(String) }, url: expect.stringMatching(/^https:\/\//) });
      expect(el.action_id).toMatch(/^countersign-/);
    }
    expect(actions.elements.map((e: any) => [e.text.text, e.style ?? null])).toEqual([
      ['Approve', 'primary'],
      ['Deny', 'danger'],
      ['Open in countersign', null],
    ]);
    expect(actions.elements[0].url).toMatch(/^https:\/\/approvals\.example\.com\/d\/[A-Za-z0-9_.-]+$/);
    expect(actions.elements[2].url).toBe(`https://approvals.example.com/#/requests/${r.id}`);
  });

  it('slack: without include_content no summary; a decision shows its headline and feedback as plain text', async () => {
    await setup({ format: 'slack', events: ['request.decided'] });
    const r = await createRequest(t!.api, COMMAND);
    expect((await decide(t!.api, r, 'deny', { feedback: 'not *today* <!here>' })).status).toBe(200);
    const { body } = await oneMessage();
    expect(JSON.stringify(body)).not.toContain('Roll out');
    expect(body.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Denied by admin', emoji: false } });
    expect(body.blocks[3]).toEqual({ type: 'section', text: { type: 'plain_text', text: 'Feedback: not *today* &lt;!here&gt;', emoji: false } });
  });

  it('discord: content plus one embed, mentions disabled, links as markdown, request text escaped everywhere', async () => {
    await setup({ format: 'discord', decision_links: true, include_content: true });
    const agent = '[Approve here](https://evil.example/phish)';
    const r = await createRequest(t!.api, { ...COMMAND, title: 'Ping @everyone **now**', source: { agent } });
    const { body } = await oneMessage();
    expect(Object.keys(body).sort()).toEqual(['allowed_mentions', 'content', 'embeds']);
    expect(body.allowed_mentions).toEqual({ parse: [] });
    expect(body.content).toBe('Approval needed: Ping @everyone \\*\\*now\\*\\*');
    expect(body.embeds).toHaveLength(1);
    const e = body.embeds[0];
    expect(e).toMatchObject({ title: 'Ping @everyone \\*\\*now\\*\\*', url: `https://approvals.example.com/#/requests/${r.id}`, color: expect.any(Number) });
    expect(e.fields).toEqual([
      { name: 'Agent', value: '\\[Approve here\\](https://evil.example/phish)', inline: true },
      { name: 'Risk', value: 'high', inline: true },
      { name: 'Kind', value: 'command', inline: true },
    ]);
    expect(e.description).toContain('Roll out build 1234 to staging.');
    expect(e.description).not.toContain('Second line');
    expect(e.description).toMatch(/\[Approve\]\(https:\/\/approvals\.example\.com\/d\/[^)]+\)/);
    expect(e.description.length).toBeLessThanOrEqual(4096);
  });

  it('discord: a bare URL is sent as written, its _ * ~ unescaped, while the text around it is escaped', async () => {
    await setup({ format: 'discord', include_content: true });
    const url = 'https://github.com/acme/my_repo/pull/1?x=a*b~c';
    await createRequest(t!.api, { ...COMMAND, title: `Review ${url} *now*`, summary: `See ${url}, [not a link](${url})` });
    const { body } = await oneMessage();
    expect(body.content).toBe(`Approval needed: Review ${url} \\*now\\*`);
    expect(body.embeds[0].title).toBe(`Review ${url} \\*now\\*`);
    expect(body.embeds[0].description).toContain(`See ${url}, \\[not a link\\](${url})`);
  });

  it('discord: a title or agent on several lines cannot add a heading or subtext; long labels never push out a link', async () => {
    await setup({ format: 'discord', decision_links: true });
    const label = (word: string) => `${word} ${'x'.repeat(900)}`;
    await createRequest(t!.api, {
      title: 'Bump lodash\n# \u2705 Approved by admin \u2014 nothing to do',
      source: { agent: 'codex\n-# verified by security team' },
      options: [
        { id: 'o1', label: label('Ship'), outcome: 'approve' },
        { id: 'o2', label: label('Hold'), outcome: 'deny' },
        { id: 'o3', label: label('Later'), outcome: 'deny' },
        { id: 'o4', label: label('Canary'), outcome: 'approve' },
        { id: 'o5', label: label('Never'), outcome: 'deny' },
      ],
    });
    const { body } = await oneMessage();
    expect(body.content).toBe('Approval needed: Bump lodash # \u2705 Approved by admin \u2014 nothing to do');
    const e = body.embeds[0];
    expect(e.fields[0]).toEqual({ name: 'Agent', value: 'codex -# verified by security team', inline: true });
    expect(e.description.match(/\]\(https:\/\/approvals\.example\.com\/d\//g)).toHaveLength(4);
    expect(e.description).toContain('[Open in countersign](https://approvals.example.com/');
    expect(e.description.length).toBeLessThanOrEqual(4096);
  });

  it('discord: a request with a blank agent still fills every embed field (Discord refuses an empty field value)', async () => {
    await setup({ format: 'discord' });
    for (const agent of ['', '   ']) await createRequest(t!.api, { ...COMMAND, source: { agent } });
    for (const rec of await receiver!.waitFor(2)) {
      const { fields } = JSON.parse(rec.body).embeds[0];
      for (const f of fields) expect(f.value.trim(), f.name).not.toBe('');
      expect(fields[0]).toEqual({ name: 'Agent', value: 'unknown', inline: true });
    }
  });

  it("long feedback on a decision is shortened to one line, so the message stays within each service's size limit", async () => {
    receiver = await startReceiver();
    const hook = (name: string, format: HookInput['format']) => ({ name, webhook: `${receiver!.url}/${name}/topic`, format, events: ['request.decided'] });
    t = await startTestServer(
      withHooks([hook('slack', 'slack'), hook('discord', 'discord'), hook('teams', 'teams'), hook('chat', 'google-chat'), hook('ntfy', 'ntfy')] as HookInput[]),
    );
    const r = await createRequest(t.api, COMMAND);
    expect((await decide(t.api, r, 'deny', { feedback: `${'why '.repeat(10_000)}\nsecond line` })).status).toBe(200);
    const sent = new Map((await receiver.waitFor(5)).map((rec) => [rec.path.split('/')[1], rec.body]));
    // Teams takes about 28 KB, Google Chat 32,000 bytes, ntfy 4 KiB of message; Slack 3,000 characters of section text.
    for (const [name, body] of sent) expect(Buffer.byteLength(body!), name).toBeLessThan(4096);
    const shown = (body: string) => body.match(/(why )+why…/)?.[0] ?? '';
    for (const [name, body] of sent) expect(shown(body!).length, name).toBe(280);
    for (const body of sent.values()) expect(body).not.toContain('second line');
  });

  it('a cut never splits an emoji in two: every service gets whole characters, no lone surrogate escape', async () => {
    receiver = await startReceiver();
    const hook = (name: string, format: HookInput['format']) => ({ name, webhook: `${receiver!.url}/${name}/topic`, format, events: ['request.created'] });
    t = await startTestServer(
      withHooks(
        [hook('slack', 'slack'), hook('discord', 'discord'), hook('teams', 'teams'), hook('chat', 'google-chat'), hook('ntfy', 'ntfy')].map((h) => ({
          ...h,
          include_content: true,
        })) as HookInput[],
      ),
    );
    // Each cut (title, summary line, button label) falls on the first half of an emoji.
    await createRequest(t.api, {
      title: `***${'😀'.repeat(127)}`,
      summary: `yy${'😀'.repeat(300)}`,
      options: [
        { id: 'ship', label: `Ship ${'😀'.repeat(100)}`, outcome: 'approve' },
        { id: 'hold', label: 'Hold', outcome: 'deny' },
      ],
    });
    for (const rec of await receiver.waitFor(5)) {
      expect(rec.body, rec.path).not.toMatch(/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/i);
      expect(rec.body, rec.path).not.toMatch(/(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}/i);
      expect(JSON.stringify(JSON.parse(rec.body)), rec.path).not.toMatch(/\\ud[89a-f]/i);
    }
  });

  it('teams: a Workflows message with one Adaptive Card attachment and OpenUrl actions, request text never markdown', async () => {
    await setup({ format: 'teams', decision_links: true, include_content: true });
    const title = 'Deploy [Approve](https://evil.example/) **now**';
    const r = await createRequest(t!.api, { ...COMMAND, title, source: { agent: '_codex_' } });
    const { body } = await oneMessage();
    expect(body.type).toBe('message');
    expect(body.attachments).toHaveLength(1);
    const a = body.attachments[0];
    expect(a).toMatchObject({ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null });
    expect(a.content).toMatchObject({ $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4' });
    // TextBlock and FactSet text is markdown in Teams; TextRun text never is: request text goes only there.
    const runs = (block: any) => block.inlines.map((i: any) => (expect(i.type).toBe('TextRun'), i.text)).join('');
    expect(a.content.body[0]).toMatchObject({ type: 'RichTextBlock' });
    expect(runs(a.content.body[0])).toBe('Approval needed');
    expect(runs(a.content.body[1])).toBe(title);
    expect(runs(a.content.body[2])).toBe('Agent: _codex_ · Risk: high · Kind: command');
    expect(runs(a.content.body[3])).toBe('Roll out build 1234 to staging.');
    const markdownText: string[] = [];
    JSON.stringify(a.content, (k, v) => {
      if (v && (v.type === 'TextBlock' || v.type === 'FactSet')) markdownText.push(JSON.stringify(v));
      return v;
    });
    expect(markdownText.join()).not.toContain('evil.example');
    expect(markdownText.join()).not.toContain('_codex_');
    expect(a.content.actions.map((x: any) => [x.type, x.title])).toEqual([
      ['Action.OpenUrl', 'Approve'],
      ['Action.OpenUrl', 'Deny'],
      ['Action.OpenUrl', 'Open in countersign'],
    ]);
    expect(a.content.actions[2].url).toBe(`https://approvals.example.com/#/requests/${r.id}`);
  });

  it('google-chat: text plus a cardsV2 card with openLink buttons', async () => {
    await setup({ format: 'google-chat', decision_links: true });
    const r = await createRequest(t!.api, { ...COMMAND, title: 'Deploy <users/all> [go](https://evil.example/)', source: { agent: '<b>bot</b>' } });
    const { body } = await oneMessage();
    expect(Object.keys(body).sort()).toEqual(['cardsV2', 'text']);
    // Chat's text syntax: `<users/all>` mentions everyone and `<url|text>` links; neither may form.
    expect(body.text).toBe('Approval needed: Deploy <\u200busers/all> [\u200bgo](https://evil.example/)');
    expect(body.cardsV2).toHaveLength(1);
    const { cardId, card } = body.cardsV2[0];
    expect(cardId).toMatch(/^countersign-/);
    expect(card.header).toEqual({ title: 'Approval needed', subtitle: 'Deploy <users/all> [go](https://evil.example/)' });
    const widgets = card.sections[0].widgets;
    expect(widgets[0]).toEqual({ decoratedText: { topLabel: 'Agent', text: '&lt;b&gt;bot&lt;/b&gt;' } });
    const buttons = widgets.at(-1).buttonList.buttons;
    expect(buttons.map((b: any) => b.text)).toEqual(['Approve', 'Deny', 'Open in countersign']);
    for (const b of buttons) expect(b.onClick.openLink.url).toMatch(/^https:\/\/approvals\.example\.com\//);
    expect(buttons[2].onClick.openLink.url).toBe(`https://approvals.example.com/#/requests/${r.id}`);
  });

  it('ntfy: JSON published to the server root with the topic, priority from the risk, click and actions', async () => {
    receiver = await startReceiver();
    t = await startTestServer(
      withHooks([{ name: 'phone', webhook: `${receiver.url}/my-secret-topic`, format: 'ntfy', decision_links: true }], {
        public_url: 'https://approvals.example.com',
      }),
    );
    const r = await createRequest(t.api, COMMAND);
    const { rec, body } = await oneMessage();
    expect(rec.path).toBe('/');
    expect(body).toMatchObject({ topic: 'my-secret-topic', title: 'Approval needed', priority: 4, click: `https://approvals.example.com/#/requests/${r.id}` });
    expect(body.message).toContain('Deploy staging');
    expect(body.actions).toHaveLength(3);
    expect(body.actions[0]).toEqual({ action: 'view', label: 'Open', url: `https://approvals.example.com/#/requests/${r.id}`, clear: true });
    expect(body.actions[1]).toMatchObject({
      action: 'http',
      label: 'Approve',
      method: 'POST',
      url: expect.stringMatching(/^https:\/\/approvals\.example\.com\/d\//),
    });
    expect(body.actions[2]).toMatchObject({ action: 'http', label: 'Deny', method: 'POST' });
    // A low-risk request asks for less attention.
    await createRequest(t.api, { ...COMMAND, risk: 'low' });
    const [, second] = await receiver.waitFor(2);
    expect(JSON.parse(second!.body).priority).toBe(2);
  });

  it("ntfy: an http action decides at one tap, so its label says what it does when the agent's label does not", async () => {
    receiver = await startReceiver();
    t = await startTestServer(
      withHooks([{ name: 'phone', webhook: `${receiver.url}/topic`, format: 'ntfy', decision_links: true }], { public_url: 'https://approvals.example.com' }),
    );
    await createRequest(t.api, {
      ...COMMAND,
      options: [
        // Single outcome words are refused at creation; phrases may still mislead.
        { id: 'halt', label: 'Stop it', outcome: 'approve' },
        { id: 'onward', label: 'Go ahead', outcome: 'deny' },
      ],
    });
    await createRequest(t.api, {
      ...COMMAND,
      options: [
        { id: 'once', label: 'approve once', outcome: 'approve' },
        { id: 'no', label: 'Not now', outcome: 'deny' },
      ],
    });
    const labels = (await receiver.waitFor(2)).map((rec) =>
      JSON.parse(rec.body)
        .actions.slice(1)
        .map((a: any) => a.label),
    );
    expect(labels).toEqual([
      ['Approve: Stop it', 'Deny: Go ahead'],
      ['approve once', 'Deny: Not now'],
    ]);
  });

  it('ntfy: a deny that needs feedback opens its page (a view action) instead of a one-tap POST that could only fail', async () => {
    receiver = await startReceiver();
    t = await startTestServer(
      withHooks([{ name: 'phone', webhook: `${receiver.url}/topic`, format: 'ntfy', decision_links: true }], { public_url: 'https://approvals.example.com' }),
    );
    await createRequest(t.api, { ...COMMAND, input: { feedback: 'required_on_deny' } });
    await createRequest(t.api, COMMAND);
    const [needs, plain] = (await receiver.waitFor(2)).map((rec) => JSON.parse(rec.body).actions.slice(1));
    expect(needs.map((a: any) => [a.action, a.label])).toEqual([
      ['http', 'Approve'],
      ['view', 'Deny'],
    ]);
    expect(needs[1].url).toMatch(/^https:\/\/approvals\.example\.com\/d\//);
    expect(needs[1].method).toBeUndefined();
    expect(plain.map((a: any) => a.action)).toEqual(['http', 'http']);
  });

  it('template: Mustache over the envelope, values JSON-escaped, no code runs', async () => {
    const template =
      '{"msg": "{{text}}", "id": "{{data.request.id}}", "agent": "{{data.request.source.agent}}", "nope": "{{constructor}}{{#data.request}}{{title}}{{/data.request}}"}';
    await setup({ format: 'template', template });
    const r = await createRequest(t!.api, { ...COMMAND, title: 'Say "hi" \\ <now>' });
    const { body } = await oneMessage();
    expect(body).toEqual({ msg: 'Approval needed: Say "hi" \\ <now>', id: r.id, agent: 'codex', nope: expect.stringContaining('Say "hi"') });
  });

  it('template with content_type text/plain inserts values as they are', async () => {
    receiver = await startReceiver();
    t = await startTestServer(
      withHooks([{ name: 'plain', webhook: `${receiver.url}/p`, format: 'template', template: '{{type}} {{data.request.title}}', content_type: 'text/plain' }]),
    );
    await createRequest(t.api, { ...COMMAND, title: 'A "quoted" title' });
    const [rec] = await receiver.waitFor(1);
    expect(rec!.headers['content-type']).toBe('text/plain');
    expect(rec!.body).toBe('request.created A "quoted" title');
  });

  it('a request decided on arrival, or a hook whose match does not cover it, sends nothing; match narrows by risk and agent', async () => {
    receiver = await startReceiver();
    t = await startTestServer(
      withHooks([{ name: 'risky', webhook: `${receiver.url}/r`, format: 'json', match: { risk: ['medium', 'high'], agent: 'codex' } }]),
    );
    await createRequest(t.api, { ...COMMAND, risk: 'low' });
    await createRequest(t.api, { ...COMMAND, source: { agent: 'other' } });
    const hit = await createRequest(t.api, COMMAND);
    const [rec] = await receiver.waitFor(1);
    expect(JSON.parse(rec!.body).data.request.id).toBe(hit.id);
    expect(await hookDeliveries(t.api, 'risky')).toHaveLength(1);
    expectValidRequest(hit);
  });

  it('a hook that does not answer within its own timeout fails naming that timeout, not callbacks.timeout', async () => {
    receiver = await startReceiver(() => 'hang');
    t = await startTestServer(withHooks([{ name: 'slow', webhook: `${receiver.url}/hook`, format: 'json', timeout: '300ms' } as HookInput]));
    const test = await t.api.post('/v1/hooks/slow/test', {});
    expect(test.status, test.text).toBe(200);
    expect(test.body).toMatchObject({ ok: false, error_class: 'timeout', error: "no response before the hook's timeout (300ms)" });
    for (const res of receiver.held) res.end();
  });

  it('GET /v1/hooks lists hooks with their last delivery; POST /v1/hooks/{name}/test sends a sample now', async () => {
    await setup({ format: 'slack', decision_links: true });
    const list = await t!.api.get('/v1/hooks');
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      expect.objectContaining({
        name: 'team',
        kind: 'webhook',
        format: 'slack',
        target: `${receiver!.url}/…`,
        decision_links: true,
        signed: false,
        last_delivery: null,
      }),
    ]);
    expect(JSON.stringify(list.body)).not.toContain('secret-part');

    const test = await t!.api.post('/v1/hooks/team/test', { event: 'request.expiring' });
    expect(test.status, test.text).toBe(200);
    expect(test.body).toMatchObject({ hook: 'team', type: 'request.expiring', ok: true, status: 200, error_class: null, error: null });
    const [rec] = await receiver!.waitFor(1);
    expect(JSON.parse(rec!.body).blocks[0].text.text).toContain('Expires in 10m');
    // A test is not queued: no delivery row.
    expect(await hookDeliveries(t!.api, 'team')).toEqual([]);

    await createRequest(t!.api, COMMAND);
    await waitForHookDeliveries(t!.api, 'team', (d) => d.length === 1 && settledAll(d));
    const again = await t!.api.get('/v1/hooks');
    expect(again.body[0].last_delivery).toMatchObject({ type: 'request.created', state: 'delivered' });

    // The body is optional: none at all, or an empty one, sends a created event.
    for (const opts of [{ raw: '' }, { raw: '', headers: { 'content-type': 'application/json' } }]) {
      const bare = await t!.api.request('POST', '/v1/hooks/team/test', undefined, opts);
      expect(bare.status, bare.text).toBe(200);
      expect(bare.body).toMatchObject({ type: 'request.created', ok: true });
    }
    expect((await t!.api.post('/v1/hooks/nope/test', {})).status).toBe(404);
    expect((await t!.api.get('/v1/hooks/nope/deliveries')).status).toBe(404);
    const bad = await t!.api.post('/v1/hooks/team/test', { event: 'request.exploded' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('event');
    const { api: submit } = await t!.submitClient('agent');
    expect((await submit.get('/v1/hooks')).status).toBe(403);
  });

  it('a test of a hook with decision links carries them, even before any real notification made the link key', async () => {
    await setup({ format: 'json', decision_links: true });
    const test = await t!.api.post('/v1/hooks/team/test', {});
    expect(test.body).toMatchObject({ ok: true });
    const [rec] = await receiver!.waitFor(1);
    const links = JSON.parse(rec!.body).data.links;
    expect(links.map((l: any) => l.option)).toEqual(['approve', 'deny']);
    // They lead to "Link not found": there is no such request.
    const page = await fetch(t!.url + new URL(links[0].url).pathname);
    expect(page.status).toBe(404);
  });

  it('a failing receiver is a failed test attempt, reported with its status', async () => {
    receiver = await startReceiver(() => ({ status: 500 }));
    t = await startTestServer(withHooks([{ name: 'down', webhook: `${receiver.url}/x`, format: 'json' }]));
    const test = await t.api.post('/v1/hooks/down/test', {});
    expect(test.body).toMatchObject({ ok: false, status: 500, error_class: 'http_status', error: 'HTTP 500' });
  });
});

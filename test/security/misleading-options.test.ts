import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, requestCount } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * An agent's own options could name the other outcome: an option `deny` that approves turns a
 * decide hook's or a script's `{"option": "deny"}` into an approval, and shows reviewers a
 * "Deny" button that approves. Such options are refused at creation, naming the field.
 */
describe('options whose id or label names the other outcome', () => {
  let t: TestServer;
  let agents = 0;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => t?.close());

  it.each([
    [
      'an id "deny" that approves',
      [
        { id: 'deny', label: 'Deny', outcome: 'approve' },
        { id: 'approve', label: 'Approve', outcome: 'deny' },
      ],
      'options[0].id',
    ],
    ['an id "Reject" that approves', [{ id: 'Reject', label: 'Go', outcome: 'approve' }], 'options[0].id'],
    [
      'an id "allow" that denies',
      [
        { id: 'go', label: 'Go', outcome: 'approve' },
        { id: 'allow', label: 'Stop', outcome: 'deny' },
      ],
      'options[1].id',
    ],
    ['a label "Deny" that approves', [{ id: 'x1', label: 'Deny', outcome: 'approve' }], 'options[0].label'],
    ['a label "No." that approves', [{ id: 'x1', label: ' No. ', outcome: 'approve' }], 'options[0].label'],
    [
      'a label "Approve" that denies',
      [
        { id: 'x1', label: 'Go', outcome: 'approve' },
        { id: 'x2', label: 'APPROVE', outcome: 'deny' },
      ],
      'options[1].label',
    ],
    ['a label "Deny" hiding a zero-width space', [{ id: 'x1', label: 'Deny\u200b', outcome: 'approve' }], 'options[0].label'],
    [
      'a label "Approve" hiding a word joiner that denies',
      [
        { id: 'x1', label: 'Go', outcome: 'approve' },
        { id: 'x2', label: 'Approve\u2060', outcome: 'deny' },
      ],
      'options[1].label',
    ],
    ['a label "Dеny" with a Cyrillic е', [{ id: 'x1', label: 'D\u0435ny', outcome: 'approve' }], 'options[0].label'],
    ['a label in full-width letters', [{ id: 'x1', label: '\uff24\uff45\uff4e\uff59', outcome: 'approve' }], 'options[0].label'],
    ['a label with a symbol before it', [{ id: 'x1', label: '\u274c Deny', outcome: 'approve' }], 'options[0].label'],
    ['a label "DEΝY" with a Greek capital Nu', [{ id: 'x1', label: 'DE\u039DY', outcome: 'approve' }], 'options[0].label'],
    ['a label "ꓓENY" with a Lisu letter', [{ id: 'x1', label: '\ua4d3ENY', outcome: 'approve' }], 'options[0].label'],
    ['a label "ᎠENY" with a Cherokee letter', [{ id: 'x1', label: '\u13a0ENY', outcome: 'approve' }], 'options[0].label'],
    ['a label "Deɴy" with a small capital', [{ id: 'x1', label: 'De\u0274y', outcome: 'approve' }], 'options[0].label'],
    ['a label "Deny" with a combining mark', [{ id: 'x1', label: 'Deny\u0323', outcome: 'approve' }], 'options[0].label'],
    [
      'a label "ΥES" that denies',
      [
        { id: 'x1', label: 'Go', outcome: 'approve' },
        { id: 'x2', label: '\u03a5ES', outcome: 'deny' },
      ],
      'options[1].label',
    ],
    ...[
      "Don't allow",
      'Do not run',
      'Do NOT approve',
      'Deny once',
      'Always deny',
      'Deny for this session',
      'Deny for this session only',
      'Deny (esc)',
      'Disallow',
      'Denies',
      'Never',
      'No way',
      'Not now',
      '❌',
      '🚫',
      'D e n y',
      '拒绝',
      'Từ chối',
      'Không đồng ý',
    ].map((label) => [`a label "${label}" that approves`, [{ id: 'x1', label, outcome: 'approve' }], 'options[0].label'] as const),
    ...['deny_once', 'reject_always', 'deny2', 'denial', 'cancelled'].map(
      (id) => [`an id "${id}" that approves`, [{ id, label: 'Go', outcome: 'approve' }], 'options[0].id'] as const,
    ),
    ...['Always allow', 'Allow once', 'Allow in this session', 'Allow this time', 'Yes (y)', 'Duyệt', 'Yes, proceed', '确认'].map(
      (label) =>
        [
          `a label "${label}" that denies`,
          [
            { id: 'x1', label: 'Go', outcome: 'approve' },
            { id: 'x2', label, outcome: 'deny' },
          ],
          'options[1].label',
        ] as const,
    ),
  ])('refuses %s with 400 naming it, storing nothing', async (_name, options, field) => {
    const agent = await t.submitClient(`agent-${++agents}`);
    expectError(await agent.api.post('/v1/requests', { title: 'wipe', kind: 'command', options }), 400, 'invalid_request', field);
    expect(await requestCount(t.api)).toBe(0);
  });

  // Last: it stores a request.
  it('takes options whose words match their outcome, and words that are not outcome names', async () => {
    const options = [
      { id: 'allow_once', label: 'Allow once', outcome: 'approve' },
      { id: 'deny', label: 'No, and tell it why', outcome: 'deny' },
      { id: 'ship', label: 'Ship it', outcome: 'approve' },
      // Other languages read as they are: Vietnamese, Russian, Greek.
      { id: 'tu_choi', label: 'Từ chối', outcome: 'deny' },
      { id: 'net', label: 'Нет', outcome: 'deny' },
      { id: 'ok_ru', label: 'Ок', outcome: 'approve' },
      { id: 'nai', label: 'Ναι', outcome: 'approve' },
      { id: 'ochi', label: 'Όχι', outcome: 'deny' },
      // A word of the other outcome that is not the first, or a word that names one only alone.
      { id: 'yes_always', label: 'Yes, and don’t ask again', outcome: 'approve' },
      { id: 'forever', label: 'Never ask again', outcome: 'approve' },
      { id: 'cancel_it', label: 'Yes, cancel it', outcome: 'deny' },
      // A verb of the other outcome with an object is the agent's action, which may be to cancel.
      { id: 'cancel_subscription', label: 'Cancel subscription', outcome: 'approve' },
      { id: 'reject_pr', label: 'Reject PR #42', outcome: 'approve' },
      { id: 'block_ip', label: 'Block IP 203.0.113.7', outcome: 'approve' },
      { id: 'keep', label: "Don't cancel", outcome: 'deny' },
      { id: 'later', label: 'Approve later', outcome: 'deny' },
      // A pronoun is the object too: the confirmation of a cancel ("Cancel the 3 stuck runs?").
      { id: 'cancel_all', label: 'Cancel all', outcome: 'approve' },
      { id: 'cancel_them', label: 'Cancel it', outcome: 'approve' },
    ];
    const res = await t.api.post('/v1/requests', { title: 'deploy', options });
    expect(res.status, res.text).toBe(201);
    expect(res.body.options.map((o: { id: string }) => o.id)).toEqual(options.map((o) => o.id));
  });
});

import { describe, expect, it } from 'vitest';
import { paperclipAdapter } from '../../src/adapters/paperclip/index.js';
import { isCredentialKey, redactCredentials } from '../../src/adapters/paperclip/redact-credentials.js';
import { contentHash } from '../../src/requests/content-hash.js';
import { decide, timeoutDecision } from '../../src/requests/decision-rules.js';
import { draftFromBody } from '../../src/requests/request-draft.js';
import { CreateRequestSchema, type DecisionBody, type HandupRequest } from '../../src/requests/request-schema.js';
import { compileSchema, loadSchema, newAjv } from '../helpers/upstream-schemas.js';
import { loadFixtures } from '../helpers/fixtures.js';

const fixtures = loadFixtures('paperclip');

// The request schema $refs the question set by its $id, so both live in one Ajv instance.
const ajv = newAjv();
ajv.addSchema(loadSchema('paperclip-question-set.schema.json'));
const validateRequest = ajv.compile(loadSchema('paperclip-prp-request.schema.json'));
const validateQuestionSet = ajv.getSchema('https://paperclip.dev/schemas/prp/v1/question-set.schema.json')!;
const validateCommand = compileSchema('paperclip-prp-command.schema.json');

function expectValid(validate: typeof validateRequest, value: unknown, what: string) {
  expect(validate(value) ? [] : validate.errors, `${what}: ${JSON.stringify(value).slice(0, 300)}`).toEqual([]);
}

/** The PRP request a frame carries: the frame itself, or `payload.request` of a PRP event. */
const requestOf = (frame: any) => (frame.schema === 'paperclip.prp.event.v1' ? frame.payload.request : frame);

describe('paperclip fixtures against the upstream schemas', () => {
  const upstream = fixtures.filter(([, fx]) => fx.schema_valid === true);
  const questionSets = fixtures.filter(
    ([, fx]) => (fx.kind === 'request' || fx.schema_valid) && requestOf(fx.frame)?.input?.schema === 'paperclip.question_set.v1',
  );
  const commands = fixtures.filter(([, fx]) => fx.kind === 'request' && fx.reply?.type === 'request.resolve');

  it('covers requests, question sets and request.resolve commands', () => {
    expect(upstream.length).toBeGreaterThanOrEqual(20);
    expect(questionSets.length).toBeGreaterThanOrEqual(5);
    expect(commands.length).toBeGreaterThanOrEqual(15);
  });

  for (const [file, fx] of upstream) {
    it(`${file}: the frame's request is a valid PRP request`, () => expectValid(validateRequest, requestOf(fx.frame), 'PRP request'));
  }

  for (const [file, fx] of questionSets) {
    it(`${file}: the inbound question set is valid`, () => expectValid(validateQuestionSet, requestOf(fx.frame).input, 'question set'));
  }

  for (const [file, fx] of commands) {
    it(`${file}: the reply is a valid PRP command`, () => {
      expectValid(validateCommand, fx.reply, 'PRP command');
      // The command schema's date-time format is not checked by Ajv without ajv-formats.
      expect(new Date(fx.reply.issuedAt).toISOString()).toBe(fx.reply.issuedAt);
    });
  }
});

const env = () => ({ now: 0, uuid: () => 'uuid', ulid: () => 'ulid', rpcId: () => 1 });
const event = (request: Record<string, unknown>) => ({
  schema: 'paperclip.prp.event.v1',
  eventType: 'runtime_request.created',
  runId: 'run-1',
  normalizedSessionId: 'session-1',
  payload: { request },
});

/** Frame → record decided with `body` → its draft and native reply, as the daemon does it (the context read back as stored). */
function decideFrame(frame: unknown, body: Omit<DecisionBody, 'content_hash'>) {
  const normalized = paperclipAdapter.normalize(paperclipAdapter.frameSchema.parse(frame), { query: {} });
  const { timeoutMs: _t, ...draft } = draftFromBody(CreateRequestSchema.parse(normalized.request), { defaultTimeout: 'none', integration: null });
  const pending: HandupRequest = { id: 'r', ...draft, status: 'pending', content_hash: contentHash(draft), created_at: 0, expires_at: null, decision: null };
  const { status, decision } = decide(pending, { ...body, content_hash: pending.content_hash }, { decidedBy: 'admin', decidedAt: 0 });
  const context = JSON.parse(JSON.stringify(normalized.context));
  return { draft, reply: paperclipAdapter.renderReply({ ...pending, status, decision }, context, env()) as any };
}

describe('paperclip adapter quirks', () => {
  const replyTo = (frame: unknown, body: Omit<DecisionBody, 'content_hash'>) => decideFrame(frame, body).reply;

  const questionSet = (question: Record<string, unknown>) =>
    event({
      schema: 'paperclip.runtime_request.v2',
      requestKind: 'runtime',
      requestId: 'req-1',
      type: 'input',
      status: 'pending',
      prompt: 'Where to?',
      input: { schema: 'paperclip.question_set.v1', questions: [{ id: 'q', prompt: 'Where?', required: true, ...question }] },
      turnId: 'turn-1',
    });

  it('answers a question set that on_timeout approve ended with cancel, unless no question is required (a submit without them is refused)', () => {
    const expired = (required: boolean) => {
      const normalized = paperclipAdapter.normalize(paperclipAdapter.frameSchema.parse(questionSet({ answerMode: 'text', required })), { query: {} });
      const { timeoutMs: _t, ...draft } = draftFromBody(CreateRequestSchema.parse({ ...normalized.request, on_timeout: 'approve' }), {
        defaultTimeout: 'none',
        integration: null,
      });
      const pending: HandupRequest = {
        id: 'r',
        ...draft,
        status: 'pending',
        content_hash: contentHash(draft),
        created_at: 0,
        expires_at: null,
        decision: null,
      };
      const terminal: HandupRequest = { ...pending, status: 'expired', decision: timeoutDecision(pending, 0) };
      return paperclipAdapter.renderReply(terminal, normalized.context, env()) as any;
    };
    expect(expired(true).payload.resolution).toEqual({ action: 'cancel' });
    expect(expired(false).payload.resolution).toMatchObject({ action: 'submit', response: { answers: {} } });
  });

  it('sends only the selection when a single-select answer also has custom text, which PaperClip would refuse', () => {
    const frame = questionSet({
      answerMode: 'single_select',
      options: [{ id: 'eu', label: 'Europe' }],
      customAnswer: { enabled: true },
    });
    const reply = replyTo(frame, { option: 'submit', fields: { answers: { q: { selected: ['Europe'], text: 'Frankfurt only' } } } });
    expect(reply.payload.resolution.response.answers).toEqual({ q: { selectedOptionIds: ['eu'] } });
  });

  it('gives repeated labels distinct ones even where the made label is one the frame has, and maps each answer back to its own option', () => {
    const frame = questionSet({
      answerMode: 'single_select',
      options: [
        { id: 'p', label: 'X (y)' },
        { id: 'y', label: 'X' },
        { id: 'z', label: 'X' },
      ],
    });
    const normalized = paperclipAdapter.normalize(paperclipAdapter.frameSchema.parse(frame), { query: {} });
    const labels = (normalized.request.input as any).questions[0].options.map((o: { label: string }) => o.label);
    expect(labels).toEqual(['X (y)', 'X (y) 2', 'X (z)']);
    for (const [label, id] of [
      ['X (y)', 'p'],
      ['X (y) 2', 'y'],
      ['X (z)', 'z'],
    ]) {
      const reply = replyTo(frame, { option: 'submit', fields: { answers: { q: { selected: [label] } } } });
      expect(reply.payload.resolution.response.answers).toEqual({ q: { selectedOptionIds: [id] } });
    }
  });

  it('keeps a repeated label made distinct within the label limit, cut short before its id', () => {
    const long = 'L'.repeat(1000);
    const frame = questionSet({
      answerMode: 'single_select',
      options: [
        { id: 'a'.repeat(160), label: long },
        { id: 'b'.repeat(160), label: long },
      ],
    });
    const normalized = paperclipAdapter.normalize(paperclipAdapter.frameSchema.parse(frame), { query: {} });
    const request = CreateRequestSchema.parse(normalized.request);
    const labels = (request.input as any).questions[0].options.map((o: { label: string }) => o.label);
    expect(labels.map((l: string) => l.length)).toEqual([1024, 1024]);
    expect(labels[0]).toBe(`${'L'.repeat(1024 - 163 - 1)}… (${'a'.repeat(160)})`);
    const reply = replyTo(frame, { option: 'submit', fields: { answers: { q: { selected: [labels[1]] } } } });
    expect(reply.payload.resolution.response.answers).toEqual({ q: { selectedOptionIds: ['b'.repeat(160)] } });
  });

  it('keeps both the selection and custom text of a multi-select answer', () => {
    const frame = questionSet({
      answerMode: 'multi_select',
      options: [{ id: 'eu', label: 'Europe' }],
      customAnswer: { enabled: true },
    });
    const reply = replyTo(frame, { option: 'submit', fields: { answers: { q: { selected: ['Europe'], text: 'and Oslo' } } } });
    expect(reply.payload.resolution.response.answers).toEqual({ q: { selectedOptionIds: ['eu'], customText: 'and Oslo' } });
  });

  it('answers scope "session" with accept when accept_for_session was not offered', () => {
    const frame = event({
      schema: 'paperclip.runtime_request.v2',
      requestKind: 'permission_approval',
      requestId: 'permission-1',
      type: 'permission',
      status: 'pending',
      prompt: 'Allow?',
      choices: [
        { key: 'accept', label: 'Allow' },
        { key: 'decline', label: 'Deny' },
      ],
      origin: { adapter: 'acpx-runtime-sidecar' },
      turnId: 'turn-1',
    });
    expect(replyTo(frame, { option: 'accept', scope: 'session' }).payload.resolution).toEqual({ action: 'accept' });
  });

  /** The reply to `frame` after on_timeout approve ended it. */
  function approvedByTimeout(frame: unknown) {
    const normalized = paperclipAdapter.normalize(paperclipAdapter.frameSchema.parse(frame), { query: {} });
    const { timeoutMs: _t, ...draft } = draftFromBody(CreateRequestSchema.parse({ ...normalized.request, on_timeout: 'approve' }), {
      defaultTimeout: 'none',
      integration: null,
    });
    const pending: HandupRequest = { id: 'r', ...draft, status: 'pending', content_hash: contentHash(draft), created_at: 0, expires_at: null, decision: null };
    return paperclipAdapter.renderReply({ ...pending, status: 'expired', decision: timeoutDecision(pending, 0) }, normalized.context, env()) as any;
  }
  const interaction = (kind: string, payload: Record<string, unknown>) => ({
    schema: 'paperclip.interaction_request.v1',
    requestKind: 'issue_thread',
    requestId: 'i-1',
    kind,
    blocking: true,
    payload: { version: 1, ...payload },
  });
  const boxes = (extra: Record<string, unknown>) =>
    interaction('request_checkbox_confirmation', {
      prompt: 'Where?',
      options: [
        { id: 'a', label: 'A' },
        { id: 'b', label: 'B' },
        { id: 'c', label: 'C' },
      ],
      ...extra,
    });

  it('sends no issue-thread body PaperClip would refuse after on_timeout approve: no verdicts, a required question unanswered, too few boxes', () => {
    const items = [
      { id: 'i1', label: 'First' },
      { id: 'i2', label: 'Second' },
    ];
    expect(approvedByTimeout(interaction('request_item_verdicts', { prompt: 'Review', items }))).toBeNull();
    const question = (required: boolean) => ({ id: 'q1', prompt: 'Which?', selectionMode: 'single', required, options: [{ id: 'o1', label: 'One' }] });
    expect(approvedByTimeout(interaction('ask_user_questions', { questions: [question(true)] }))).toBeNull();
    expect(approvedByTimeout(interaction('ask_user_questions', { questions: [question(false)] }))).toMatchObject({ action: 'respond', body: { answers: [] } });
    expect(approvedByTimeout(boxes({ minSelected: 1 }))).toBeNull();
    expect(approvedByTimeout(boxes({ maxSelected: 1, defaultSelectedOptionIds: ['a', 'b'] }))).toBeNull();
    expect(approvedByTimeout(boxes({ minSelected: 1, defaultSelectedOptionIds: ['b'] }))).toMatchObject({
      action: 'accept',
      body: { selectedOptionIds: ['b'] },
    });
  });

  it("refuses a reviewer's accept of a checkbox confirmation outside its minSelected / maxSelected", () => {
    const check = (frame: unknown, fields: Record<string, boolean>) => {
      const normalized = paperclipAdapter.normalize(paperclipAdapter.frameSchema.parse(frame), { query: {} });
      const decided = { ...(normalized.request as HandupRequest), decision: { option: 'accept', outcome: 'approve', fields } } as HandupRequest;
      return () => paperclipAdapter.checkDecision!(decided, normalized.context);
    };
    expect(check(boxes({ minSelected: 2 }), { a: true })).toThrow(/fields: Select at least 2 options\. \(1 ticked\)/);
    expect(check(boxes({ minSelected: 1, maxSelected: 2 }), { a: true, b: true, c: true })).toThrow(/Select 1 to 2 options/);
    expect(check(boxes({ minSelected: 1, maxSelected: 2 }), { a: true, c: true })).not.toThrow();
  });

  it("refuses a reviewer's item verdicts PaperClip's route would refuse or that would drop a reason", () => {
    const frame = (extra: Record<string, unknown> = {}) =>
      interaction('request_item_verdicts', {
        prompt: 'Review',
        items: [
          { id: 'i1', label: 'First' },
          { id: 'i2', label: 'Second' },
        ],
        ...extra,
      });
    const check = (f: unknown, answers: Record<string, { selected?: string[]; text?: string }>) => {
      const normalized = paperclipAdapter.normalize(paperclipAdapter.frameSchema.parse(f), { query: {} });
      const decided = { ...(normalized.request as HandupRequest), decision: { option: 'submit', outcome: 'approve', fields: { answers } } } as HandupRequest;
      return () => paperclipAdapter.checkDecision!(decided, normalized.context);
    };
    // Text alone, where the reviewer meant a reason: it would be left out of the verdicts.
    expect(check(frame(), { i1: { selected: ['Approve'] }, i2: { text: 'looks fine to me' } })).toThrow(
      /fields\.answers\.i2: a reason goes with a verdict: choose one of Approve, Reject/,
    );
    expect(check(frame(), { i1: { text: 'hmm' }, i2: { text: 'hmm' } })).toThrow(/fields\.answers\.i1/);
    expect(check(frame(), {})).toThrow(/fields\.answers: give at least one item a verdict/);
    // requireReasonOn (default: reject).
    expect(check(frame(), { i1: { selected: ['Reject'] } })).toThrow(/fields\.answers\.i1\.text: Reject needs a reason/);
    expect(check(frame(), { i1: { selected: ['Reject'], text: 'breaks the build' }, i2: { selected: ['Approve'] } })).not.toThrow();
    expect(check(frame({ requireReasonOn: [] }), { i1: { selected: ['Reject'] } })).not.toThrow();
    expect(check(frame({ verdicts: ['approve', 'reject', 'defer'], requireReasonOn: ['defer'] }), { i1: { selected: ['Defer'] } })).toThrow(
      /Defer needs a reason/,
    );
    // An item whose native id is outside the safe set is named by its record id, the one answered.
    const unsafe = frame({ items: [{ id: 'deploy/target', label: 'Target' }] });
    expect(check(unsafe, { q1: { selected: ['Reject'] } })).toThrow(/fields\.answers\.q1\.text: Reject needs a reason/);
    expect(check(unsafe, { q1: { selected: ['Approve'] } })).not.toThrow();
  });

  it('refuses checkbox bounds no selection can meet, naming payload.minSelected', () => {
    for (const [extra, says] of [
      [{ minSelected: 4 }, 'must be at most the number of options (3)'],
      [{ minSelected: 2, maxSelected: 1 }, 'must be at most maxSelected (1)'],
    ] as const) {
      const parsed = paperclipAdapter.frameSchema.safeParse(boxes(extra));
      expect(parsed.success, JSON.stringify(extra)).toBe(false);
      expect(parsed.error!.issues).toEqual([expect.objectContaining({ path: ['payload', 'minSelected'], message: says })]);
    }
    for (const extra of [{ minSelected: 3 }, { minSelected: 2, maxSelected: 2 }, { maxSelected: 0 }]) {
      expect(paperclipAdapter.frameSchema.safeParse(boxes(extra)).success, JSON.stringify(extra)).toBe(true);
    }
  });

  it('never offers accept_for_session on an elicitation, also when its choices list it (the harness refuses it there)', () => {
    const elicitation = (choices: unknown) =>
      event({
        requestKind: 'elicitation',
        requestId: 'el-1',
        method: 'mcpServer/elicitation/request',
        status: 'pending',
        prompt: 'Allow the MCP server?',
        details: {},
        choices,
        turnId: 't-1',
      });
    const normalize = (frame: unknown) => paperclipAdapter.normalize(paperclipAdapter.frameSchema.parse(frame), { query: {} });
    const offered = normalize(
      elicitation([
        { key: 'accept_for_session', label: 'Always' },
        { key: 'decline', label: 'No' },
      ]),
    );
    expect(offered.request.options!.map((o) => o.id)).toEqual(['decline']);
    expect(() => normalize(elicitation([{ key: 'accept_for_session', label: 'Always' }]))).toThrow(/payload\.request\.choices: no action/);
  });

  it('rejects suggested tasks when every one is unticked, since accepting without keys would create them all', () => {
    const frame = {
      schema: 'paperclip.interaction_request.v1',
      requestKind: 'issue_thread',
      requestId: 'i-1',
      kind: 'suggest_tasks',
      blocking: true,
      payload: { version: 1, tasks: [{ clientKey: 'a', title: 'A' }] },
    };
    expect(replyTo(frame, { option: 'accept', fields: { a: false } })).toEqual({ requestId: 'i-1', kind: 'suggest_tasks', action: 'reject', body: {} });
  });

  it('sends nothing for a declined v1 input, whose legacy reply has no refusal', () => {
    const frame = {
      schema: 'paperclip.runtime_request.v1',
      requestKind: 'runtime',
      requestId: 'in-1',
      type: 'input',
      status: 'pending',
      prompt: 'Label?',
    };
    expect(replyTo(frame, { option: 'decline' })).toBeNull();
  });

  it('marks optional questions on the record; notes only a pattern it cannot check itself', () => {
    const normalize = (question: Record<string, unknown>) =>
      paperclipAdapter.normalize(paperclipAdapter.frameSchema.parse(questionSet(question)), { query: {} });
    const plain = normalize({ required: false, answerMode: 'text', textValidation: { maxLength: 5, pattern: '^[a-z]+$' } });
    expect(plain.request.input).toMatchObject({ optional_questions: ['q'] });
    expect(plain.notes).toEqual([]);
    const lookahead = normalize({ answerMode: 'text', textValidation: { pattern: '^(?=.*\\d).+$' } });
    expect(lookahead.request.input).not.toHaveProperty('optional_questions');
    expect(lookahead.notes).toEqual([
      'paperclip.runtime_request.v2 input: question "q": textValidation.pattern needs a backtracking engine: an answer it cannot test within 250 ms is left to the runner',
    ]);
  });

  it('refuses a textValidation PaperClip itself would refuse', () => {
    for (const textValidation of [{ pattern: '(' }, { minLength: 5, maxLength: 2 }, { minimum: 3, maximum: 1 }]) {
      const parsed = paperclipAdapter.frameSchema.safeParse(questionSet({ answerMode: 'text', textValidation }));
      expect(parsed.success, JSON.stringify(textValidation)).toBe(false);
    }
  });
  it("refuses a decision question that breaks the schema's intent rules, naming the field", () => {
    const decision = {
      answerMode: 'single_select',
      intent: 'decision',
      recommendationRationale: 'Postgres is run already.',
      options: [
        { id: 'pg', label: 'Postgres', recommended: true },
        { id: 'sqlite', label: 'SQLite' },
      ],
    };
    expect(paperclipAdapter.frameSchema.safeParse(questionSet(decision)).success).toBe(true);
    const broken: Array<[Record<string, unknown>, string]> = [
      [{ required: false }, 'required'],
      [{ answerMode: 'multi_select' }, 'answerMode'],
      [{ recommendationRationale: undefined }, 'recommendationRationale'],
      [{ customAnswer: { enabled: true } }, 'customAnswer'],
      [{ options: [{ id: 'pg', label: 'Postgres', recommended: true }] }, 'options'],
      [
        {
          options: [
            { id: 'pg', label: 'Postgres' },
            { id: 'sqlite', label: 'SQLite' },
          ],
        },
        'options',
      ],
      [
        {
          options: [
            { id: 'pg', label: 'Postgres', recommended: true },
            { id: 'pg2', label: 'Postgres' },
          ],
        },
        'options.1.label',
      ],
    ];
    for (const [change, field] of broken) {
      const parsed = paperclipAdapter.frameSchema.safeParse(questionSet({ ...decision, ...change }));
      expect(parsed.success, JSON.stringify(change)).toBe(false);
      const paths = parsed.error!.issues.map((i) => i.path.join('.'));
      expect(
        paths.some((p) => p.endsWith(`questions.0.${field}`)),
        `${JSON.stringify(change)}: ${paths.join(', ')}`,
      ).toBe(true);
    }
  });
});

describe('paperclip decision checks (textValidation)', () => {
  const question = (q: Record<string, unknown>) => ({
    schema: 'paperclip.runtime_request.v2',
    requestKind: 'runtime',
    requestId: 'req-1',
    type: 'input',
    status: 'pending',
    prompt: 'Where to?',
    input: { schema: 'paperclip.question_set.v1', questions: [{ id: 'q', prompt: 'Where?', required: true, ...q }] },
  });

  /** The decision checked as the daemon does before storing it; the thrown message, or null. */
  function problem(frame: unknown, answer: { selected?: string[]; text?: string }): string | null {
    const normalized = paperclipAdapter.normalize(paperclipAdapter.frameSchema.parse(frame), { query: {} });
    const { timeoutMs: _t, ...draft } = draftFromBody(CreateRequestSchema.parse(normalized.request), { defaultTimeout: 'none', integration: null });
    const pending: HandupRequest = { id: 'r', ...draft, status: 'pending', content_hash: contentHash(draft), created_at: 0, expires_at: null, decision: null };
    const body = { option: 'submit', content_hash: pending.content_hash, fields: { answers: { q: { selected: [], ...answer } } } };
    const { status, decision } = decide(pending, body, { decidedBy: 'admin', decidedAt: 0 });
    try {
      paperclipAdapter.checkDecision({ ...pending, status, decision }, normalized.context);
      return null;
    } catch (err) {
      expect(err).toMatchObject({ code: 'invalid_decision' });
      return (err as Error).message;
    }
  }

  const text = (textValidation: Record<string, unknown>) => question({ answerMode: 'text', textValidation });

  it('checks lengths in UTF-16 units, numbers as Number() reads them, and the pattern unanchored', () => {
    expect(problem(text({ minLength: 3 }), { text: 'ab' })).toBe('fields.answers.q: must contain at least 3 characters (PaperClip textValidation)');
    expect(problem(text({ maxLength: 2 }), { text: '😀' })).toBeNull();
    expect(problem(text({ maxLength: 1 }), { text: '😀' })).toContain('at most 1 characters');
    expect(problem(text({ inputType: 'integer' }), { text: '3.5' })).toContain('must be a valid integer');
    expect(problem(text({ inputType: 'integer' }), { text: '1e3' })).toBeNull();
    expect(problem(text({ inputType: 'number', minimum: 0.5 }), { text: '0.25' })).toContain('must be at least 0.5');
    expect(problem(text({ inputType: 'number' }), { text: 'Infinity' })).toContain('must be a valid number');
    expect(problem(text({ pattern: '[0-9]{3}' }), { text: 'build 123' })).toBeNull();
    expect(problem(text({ pattern: '^[0-9]{3}$' }), { text: 'build 123' })).toContain('does not match the required format');
  });

  it('checks the custom text of a select question, and refuses a single-select answer with both a pick and text', () => {
    const select = (answerMode: string) =>
      question({ answerMode, options: [{ id: 'eu', label: 'Europe' }], customAnswer: { enabled: true }, textValidation: { maxLength: 4 } });
    expect(problem(select('single_select'), { text: 'Frankfurt' })).toContain('fields.answers.q');
    // PaperClip refuses a single-select answer with both, and the text would be lost: refused here.
    expect(problem(select('single_select'), { selected: ['Europe'], text: 'Fra' })).toContain('not both');
    expect(problem(select('multi_select'), { selected: ['Europe'], text: 'Frankfurt' })).toContain('at most 4');
  });

  it("runs an agent's pattern under a time limit, so a backtracking pattern cannot stall a decision", () => {
    expect(problem(text({ pattern: '^(a+)+$' }), { text: `${'a'.repeat(5000)}!` })).toContain('does not match');
    expect(problem(text({ pattern: '^(a+)+$' }), { text: 'a'.repeat(5000) })).toBeNull();
  });

  it("reads a pattern as the runner's engine does (JavaScript, no flags), not as RE2 would", () => {
    // Without the u flag \p is a plain p: "abc" does not match, "p{L}}" does.
    expect(problem(text({ pattern: '^\\p{L}+$' }), { text: 'abc' })).toContain('does not match');
    expect(problem(text({ pattern: '^\\p{L}+$' }), { text: 'p{L}}' })).toBeNull();
    // [[:digit:]] is a class of "[", ":", "d", ... followed by "]" to JavaScript.
    expect(problem(text({ pattern: '^[[:digit:]]$' }), { text: '7' })).toContain('does not match');
    expect(problem(text({ pattern: '^[[:digit:]]$' }), { text: 'd]' })).toBeNull();
    // A lookahead is checked too.
    expect(problem(text({ pattern: '^(?=.*\\d).+$' }), { text: 'no digits' })).toContain('does not match');
    expect(problem(text({ pattern: '^(?=.*\\d).+$' }), { text: 'one 1' })).toBeNull();
  });
});

describe('paperclip controllerSeq stamping', () => {
  it('stamps request.resolve commands only, with a fresh commandId', () => {
    const command = { schema: 'paperclip.prp.command.v1', commandId: 'c-1', controllerSeq: 1, type: 'request.resolve', issuedAt: 'x', payload: {} };
    expect(paperclipAdapter.sequenceReply(command, 9, { ulid: () => 'c-2' })).toEqual({ ...command, commandId: 'c-2', controllerSeq: 9 });
    expect(paperclipAdapter.sequenceReply({ requestId: 'r', response: { decision: 'allow' } }, 9, { ulid: () => 'c-2' })).toBeNull();
    expect(paperclipAdapter.sequenceReply({ requestId: 'i', kind: 'request_confirmation', action: 'accept', body: {} }, 9, { ulid: () => 'c-2' })).toBeNull();
  });
});

describe('paperclip credential redaction', () => {
  it('matches credential-like keys however they are spelled', () => {
    for (const key of [
      'authorization',
      'Authorization',
      'set-cookie',
      'GITHUB_TOKEN',
      'client_secret',
      'db.password',
      'api_key',
      'x-api-key',
      'apiKey',
      'AWS_ACCESS_KEY_ID',
      'accessKey',
    ]) {
      expect(isCredentialKey(key), key).toBe(true);
    }
    for (const key of ['toolCallId', 'command', 'path', 'author', 'keys', 'access', 'passage']) expect(isCredentialKey(key), key).toBe(false);
  });

  it('redacts at any depth, inside arrays too, leaving the input untouched', () => {
    const details = { a: [{ b: { cookie: 'c' } }, 'token'], nested: { Secret: { deep: 1 } }, keep: 'x' };
    expect(redactCredentials(details)).toEqual({ a: [{ b: { cookie: '[redacted]' } }, 'token'], nested: { Secret: '[redacted]' }, keep: 'x' });
    expect(details.nested.Secret).toEqual({ deep: 1 });
  });

  it("redacts a tool action's JSON arguments summary, and leaves one without credentials as sent", () => {
    const confirmation = (argumentsSummaryJson: string) => ({
      schema: 'paperclip.interaction_request.v1',
      requestKind: 'issue_thread',
      requestId: 'i-1',
      kind: 'request_confirmation',
      blocking: true,
      payload: { version: 1, prompt: 'Send it?', toolAction: { toolName: 'http.post', risk: 'write', argumentsSummaryJson } },
    });
    const previewOf = (summary: string) => {
      const { request } = paperclipAdapter.normalize(paperclipAdapter.frameSchema.parse(confirmation(summary)), { query: {} });
      return request.previews!.find((p) => p.title === 'Arguments')!.inline;
    };
    expect(previewOf('{"url":"https://x.test","headers":{"Authorization":"Bearer t"}}')).toBe(
      JSON.stringify({ url: 'https://x.test', headers: { Authorization: '[redacted]' } }, null, 2),
    );
    expect(previewOf('{"url": "https://x.test"}')).toBe('{"url": "https://x.test"}');
  });
});

describe('paperclip ids a record cannot carry', () => {
  const replyTo = (frame: unknown, answers: Record<string, { selected?: string[]; text?: string }>) =>
    decideFrame(frame, { option: 'submit', fields: { answers } });

  it('a question or field called "__proto__" is q1 in the record and an own "__proto__" key of the reply', () => {
    const set = event({
      schema: 'paperclip.runtime_request.v2',
      requestKind: 'runtime',
      requestId: 'req-1',
      type: 'input',
      status: 'pending',
      prompt: 'Where to?',
      input: { schema: 'paperclip.question_set.v1', questions: [{ id: '__proto__', prompt: 'Where?', required: true, answerMode: 'text' }] },
    });
    const asked = replyTo(set, { q1: { text: 'staging' } });
    expect(asked.draft.input!.questions!.map((q) => q.id)).toEqual(['q1']);
    const answers = asked.reply.payload.resolution.response.answers;
    expect(Object.hasOwn(answers, '__proto__')).toBe(true);
    expect(JSON.stringify(answers)).toBe('{"__proto__":{"text":"staging"}}');

    for (const requestKind of ['user_input', 'elicitation']) {
      const form = event({ requestId: 'req-2', requestKind, prompt: 'Which?', details: { fields: [{ name: '__proto__' }, { name: 'env name' }] } });
      const { draft, reply } = replyTo(form, { q1: { text: 'a' }, q2: { text: 'b' } });
      expect(draft.input!.questions!.map((q) => q.id)).toEqual(['q1', 'q2']);
      const sent = requestKind === 'user_input' ? reply.payload.resolution.answers : reply.payload.resolution.content;
      expect(JSON.stringify(sent)).toBe(
        requestKind === 'user_input' ? '{"__proto__":{"answers":["a"]},"env name":{"answers":["b"]}}' : '{"__proto__":"a","env name":"b"}',
      );
    }
  });

  it('reads a v1 key that grants more than this call from the key itself, though the option id does not say so', () => {
    const frame = {
      schema: 'paperclip.runtime_request.v1',
      requestKind: 'runtime',
      requestId: 'req-3',
      type: 'permission',
      status: 'pending',
      prompt: 'Write it?',
      choices: [
        { key: 'allow for this session', label: 'Allow for the session' },
        { key: 'allow now', label: 'Allow now' },
      ],
    };
    const { request } = paperclipAdapter.normalize(paperclipAdapter.frameSchema.parse(frame), { query: {} });
    expect(request.options!.map((o) => [o.id, o.label])).toEqual([
      ['o2', 'Allow now'],
      ['o1', 'Allow for the session'],
    ]);
  });
});

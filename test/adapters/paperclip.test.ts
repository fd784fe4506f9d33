import { describe, expect, it } from 'vitest';
import { paperclipAdapter } from '../../src/adapters/paperclip/index.js';
import { contentHash } from '../../src/requests/content-hash.js';
import { decide } from '../../src/requests/decision-rules.js';
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
  const questionSets = fixtures.filter(([, fx]) => (fx.kind === 'request' || fx.schema_valid) && requestOf(fx.frame)?.input?.schema === 'paperclip.question_set.v1');
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

describe('paperclip adapter quirks', () => {
  const env = () => ({ now: 0, uuid: () => 'uuid', ulid: () => 'ulid', rpcId: () => 1 });
  const event = (request: Record<string, unknown>) => ({
    schema: 'paperclip.prp.event.v1',
    eventType: 'runtime_request.created',
    runId: 'run-1',
    normalizedSessionId: 'session-1',
    payload: { request },
  });

  /** Frame → record decided with `body` → native reply, as the daemon does it. */
  function replyTo(frame: unknown, body: Omit<DecisionBody, 'content_hash'>) {
    const normalized = paperclipAdapter.normalize(paperclipAdapter.frameSchema.parse(frame), { query: {} });
    const { timeoutMs: _t, ...draft } = draftFromBody(CreateRequestSchema.parse(normalized.request), { defaultTimeout: 'none', integration: null });
    const pending: HandupRequest = { id: 'r', ...draft, status: 'pending', content_hash: contentHash(draft), created_at: 0, expires_at: null, decision: null };
    const { status, decision } = decide(pending, { ...body, content_hash: pending.content_hash }, { decidedBy: 'admin', decidedAt: 0 });
    return paperclipAdapter.renderReply({ ...pending, status, decision }, normalized.context, env()) as any;
  }

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

  it('sends only the selection when a single-select answer also has custom text, which PaperClip would refuse', () => {
    const frame = questionSet({
      answerMode: 'single_select',
      options: [{ id: 'eu', label: 'Europe' }],
      customAnswer: { enabled: true },
    });
    const reply = replyTo(frame, { option: 'submit', fields: { answers: { q: { selected: ['Europe'], text: 'Frankfurt only' } } } });
    expect(reply.payload.resolution.response.answers).toEqual({ q: { selectedOptionIds: ['eu'] } });
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
      choices: [{ key: 'accept', label: 'Allow' }, { key: 'decline', label: 'Deny' }],
      origin: { adapter: 'acpx-runtime-sidecar' },
      turnId: 'turn-1',
    });
    expect(replyTo(frame, { option: 'accept', scope: 'session' }).payload.resolution).toEqual({ action: 'accept' });
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

  it('notes what the record cannot hold: optional questions and text validation', () => {
    const normalized = paperclipAdapter.normalize(
      paperclipAdapter.frameSchema.parse(questionSet({ required: false, answerMode: 'text', textValidation: { maxLength: 5 } })),
      { query: {} },
    );
    expect(normalized.notes).toEqual([
      'paperclip.runtime_request.v2 input: question "q" is optional upstream but must be answered here',
      'paperclip.runtime_request.v2 input: question "q" has text validation PaperClip checks on resolve: {"maxLength":5}',
    ]);
  });
});

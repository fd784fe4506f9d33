import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/lib/errors.js';
import { contentHash } from '../../src/requests/content-hash.js';
import { decide, timeoutDecision } from '../../src/requests/decision-rules.js';
import { draftFromBody } from '../../src/requests/request-draft.js';
import { CreateRequestSchema, DecisionBodySchema, type HandupRequest } from '../../src/requests/request-schema.js';

const META = { decidedBy: 'admin', decidedAt: 1_767_225_600_000 };

function record(body: Record<string, unknown>): HandupRequest {
  const { timeoutMs: _t, ...fields } = draftFromBody(CreateRequestSchema.parse(body), { defaultTimeout: 'none', integration: null });
  return { id: '01KDXB5M000000000000000001', ...fields, status: 'pending', content_hash: contentHash(fields), created_at: 0, expires_at: null, decision: null };
}

function run(r: HandupRequest, body: Record<string, unknown>) {
  return decide(r, DecisionBodySchema.parse({ content_hash: r.content_hash, ...body }), META);
}

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected an AppError');
}

const QUESTION = { title: 'q', kind: 'question', input: { questions: [{ id: 'q', question: '?', options: [{ label: 'A' }, { label: 'B' }] }] } };

describe('decision rules', () => {
  it.each([
    ['custom', {}, 'approve', 'approved'],
    ['custom', {}, 'deny', 'denied'],
    ['command', { kind: 'command' }, 'approve', 'approved'],
    ['question', QUESTION, 'decline', 'denied'],
    ['info', { kind: 'info' }, 'ok', 'dismissed'],
    ['info', { kind: 'info' }, 'dismiss', 'dismissed'],
  ])('%s + %s → %s', (_kind, body, option, status) => {
    const r = record({ title: 't', ...body });
    const out = run(r, { option });
    expect(out.status).toBe(status);
    expect(out.decision).toMatchObject({ option, content_hash: r.content_hash, decided_by: 'admin', decided_at: META.decidedAt, feedback: null, fields: null });
  });

  it('a submitted question is answered, with answers normalised to {selected, text?}', () => {
    const r = record(QUESTION);
    const out = run(r, { option: 'submit', fields: { answers: { q: { selected: ['B'] } } } });
    expect(out.status).toBe('answered');
    expect(out.decision.fields).toEqual({ answers: { q: { selected: ['B'] } } });
  });

  it('a question listed in input.optional_questions may be left out or left empty; the others may not', () => {
    const r = record({
      ...QUESTION,
      input: { questions: [...QUESTION.input.questions, { id: 'note', question: 'Note?', allow_free_text: true }], optional_questions: ['note'] },
    });
    expect(run(r, { option: 'submit', fields: { answers: { q: { selected: ['A'] } } } }).decision.fields).toEqual({ answers: { q: { selected: ['A'] } } });
    expect(run(r, { option: 'submit', fields: { answers: { q: { selected: ['A'] }, note: { selected: [], text: '  ' } } } }).decision.fields).toEqual({
      answers: { q: { selected: ['A'] } },
    });
    expect(run(r, { option: 'submit', fields: { answers: { q: { selected: ['A'] }, note: { text: 'ok' } } } }).decision.fields).toEqual({
      answers: { q: { selected: ['A'] }, note: { selected: [], text: 'ok' } },
    });
    expect(refusal(() => run(r, { option: 'submit', fields: { answers: { note: { text: 'ok' } } } })).message).toBe(
      'fields.answers.q: every question must be answered',
    );
  });

  it('input.optional_questions must name questions of the request, once each', () => {
    const input = (optional: string[]) => ({ ...QUESTION, input: { ...QUESTION.input, optional_questions: optional } });
    const paths = (optional: string[]) => CreateRequestSchema.safeParse(input(optional)).error?.issues.map((i) => i.path.join('.'));
    expect(CreateRequestSchema.safeParse(input(['q'])).success).toBe(true);
    expect(paths(['nope'])).toEqual(['input.optional_questions.0']);
    expect(paths(['q', 'q'])).toEqual(['input.optional_questions.1']);
  });

  it('checks the hash before anything else: a stale hash is 412 even with a bad option', () => {
    const r = record({ title: 't' });
    const err = refusal(() => decide(r, { option: 'nope', content_hash: 'sha256:old' }, META));
    expect(err.code).toBe('content_hash_mismatch');
    expect(err.status).toBe(412);
  });

  it('an unknown option lists the valid ones', () => {
    const err = refusal(() => run(record({ title: 't' }), { option: 'maybe' }));
    expect(err.code).toBe('invalid_decision');
    expect(err.message).toContain('approve, deny');
  });

  it('blank feedback is no feedback', () => {
    const r = record({ title: 't', input: { feedback: 'required_on_deny' } });
    expect(refusal(() => run(r, { option: 'deny', feedback: ' \n ' })).message).toContain('feedback');
    expect(run(record({ title: 't' }), { option: 'deny', feedback: '  ' }).decision.feedback).toBeNull();
    expect(run(r, { option: 'deny', feedback: 'no' }).decision.feedback).toBe('no');
  });

  it('keeps edited input of non-question requests in decision.fields', () => {
    const out = run(record({ title: 't', input: { command: 'ls' } }), { option: 'approve', fields: { command: 'ls -la' } });
    expect(out.decision.fields).toEqual({ command: 'ls -la' });
  });

  it('records a scope only when one is given', () => {
    const r = record({ title: 't', tool: 'Bash', source: { agent: 'a', session: 's', repo: 'r' } });
    expect(run(r, { option: 'approve' }).decision).not.toHaveProperty('scope');
    expect(run(r, { option: 'approve', scope: 'session' }).decision.scope).toBe('session');
    expect(run(r, { option: 'approve', scope: 'always' }).decision.scope).toBe('always');
  });

  it('does not change the record it is given', () => {
    const r = record({ title: 't' });
    const copy = structuredClone(r);
    run(r, { option: 'approve' });
    expect(r).toEqual(copy);
  });

  describe('timeoutDecision', () => {
    it('deny and approve decide with the first option of that outcome, by "timeout"', () => {
      const r = record({
        title: 't',
        on_timeout: 'approve',
        options: [
          { id: 'no', label: 'No', outcome: 'deny' },
          { id: 'yes', label: 'Yes', outcome: 'approve' },
          { id: 'yes2', label: 'Yes too', outcome: 'approve' },
        ],
      });
      expect(timeoutDecision(r, 5)).toEqual({
        option: 'yes',
        content_hash: r.content_hash,
        outcome: 'approve',
        feedback: null,
        fields: null,
        decided_by: 'timeout',
        decided_at: 5,
      });
      expect(timeoutDecision({ ...r, on_timeout: 'deny' }, 5)).toMatchObject({ option: 'no', outcome: 'deny' });
    });

    it('expire carries no decision', () => {
      expect(timeoutDecision(record({ title: 't', on_timeout: 'expire' }), 5)).toBeNull();
    });

    it('no decision when the request has no option with that outcome', () => {
      const r = record({ title: 't', options: [{ id: 'ack', label: 'Ack', outcome: 'approve' }] });
      expect(r.on_timeout).toBe('deny');
      expect(timeoutDecision(r, 5)).toBeNull();
    });
  });
});

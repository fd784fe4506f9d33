import { describe, expect, it } from 'vitest';
import type { ReplyEnv } from '../../src/adapters/adapter.js';
import { alpAdapter, couldReadAsConsent } from '../../src/adapters/alp.js';
import { AppError } from '../../src/lib/errors.js';
import { contentHash } from '../../src/requests/content-hash.js';
import { decide, timeoutDecision } from '../../src/requests/decision-rules.js';
import { draftFromBody } from '../../src/requests/request-draft.js';
import { CreateRequestSchema, type DecisionBody, type HandupRequest, type OnTimeout } from '../../src/requests/request-schema.js';

const env = (): ReplyEnv => ({ now: 0, uuid: () => '00000000-0000-4000-8000-000000000001', ulid: () => '01KDXB5M000000000000000001', rpcId: () => 7 });

function questionEvent(options: string[] | undefined, id = 'q_5b2c9e41f7a0') {
  return {
    type: 'question',
    question: {
      id,
      sessionId: 'ses_3f9a1c2b7d4e5f60',
      rootId: 'ses_3f9a1c2b7d4e5f60',
      agent: 'main',
      body: 'main wants to run npm test.',
      options,
      askedAt: '2026-10-10T09:12:03.110Z',
    },
  };
}

function normalize(frame: unknown) {
  const n = alpAdapter.normalize(alpAdapter.frameSchema.parse(frame), { query: {} });
  return { ...n, request: CreateRequestSchema.parse(n.request) };
}

/** The record as the daemon stores it, ended the way `end` says; then the reply ALP would get. */
function reply(options: string[] | undefined, end: Omit<DecisionBody, 'content_hash'> | 'expire' | 'cancel', onTimeout: OnTimeout = 'deny') {
  const { request, context } = normalize(questionEvent(options));
  const { timeoutMs: _t, ...draft } = draftFromBody({ ...request, on_timeout: onTimeout }, { defaultTimeout: '30m', integration: null });
  const pending: HandupRequest = {
    id: '01KDXB5M00000000000000REQ0',
    ...draft,
    status: 'pending',
    content_hash: contentHash(draft),
    created_at: 0,
    expires_at: 1,
    decision: null,
  };
  const ended: HandupRequest =
    end === 'cancel'
      ? { ...pending, status: 'cancelled' }
      : end === 'expire'
        ? { ...pending, status: 'expired', decision: timeoutDecision(pending, 1) }
        : { ...pending, ...decide(pending, { ...end, content_hash: pending.content_hash }, { decidedBy: 'admin', decidedAt: 1 }) };
  return (alpAdapter.renderReply(ended, JSON.parse(JSON.stringify(context)), env()) as { params: Record<string, unknown> }).params;
}

const VI_PERMISSION = ['Cho phép lần này', 'Luôn cho phép', 'Từ chối'];

describe('the consent-word rule (a deny whose feedback could read as consent is sent as a dismissal)', () => {
  it('counts the approving words in any case and with surrounding spaces or end punctuation', () => {
    for (const text of [
      'ok',
      'OK',
      ' Okay ',
      'yes',
      'Yes!',
      'approve',
      'Approved.',
      'LGTM',
      'sure',
      'go ahead',
      'đồng ý',
      'ĐỒNG Ý',
      'Duyệt',
      'được',
      'vâng',
      'chấp nhận',
    ]) {
      expect(couldReadAsConsent(text), text).toBe(true);
    }
  });

  it("counts ALP's allow labels in both languages, and its trust label", () => {
    for (const text of [
      'Allow once',
      'always allow',
      'Approve',
      'Cho phép lần này',
      'luôn cho phép',
      'Duyệt',
      'Trust this workspace',
      'Tin cậy workspace này',
    ]) {
      expect(couldReadAsConsent(text), text).toBe(true);
    }
  });

  it('counts text that starts with an approving word, in case ALP reads only the first word', () => {
    for (const text of ['ok, but not before Friday', 'Yes - after the freeze', 'đồng ý nhưng để sau', 'Allow once more, then stop']) {
      expect(couldReadAsConsent(text), text).toBe(true);
    }
  });

  it('does not count words that merely begin like an approving word', () => {
    for (const text of ['okra', "yesterday's deploy broke prod", 'surely not', 'Approver is on leave', 'ysomething']) {
      expect(couldReadAsConsent(text), text).toBe(false);
    }
  });

  it('does not count refusals, reasons or blank text', () => {
    for (const text of ['deploy window closed', 'no', 'Deny', 'Reject', 'Từ chối', 'không được', 'not ok', 'Để sau', '', '   ']) {
      expect(couldReadAsConsent(text), text).toBe(false);
    }
  });

  it('reads Vietnamese with decomposed diacritics (NFD) the same as composed', () => {
    expect(couldReadAsConsent('Đồng ý'.normalize('NFD'))).toBe(true);
    expect(couldReadAsConsent('Luôn cho phép'.normalize('NFD'))).toBe(true);
  });

  it('sends consent-like feedback as the dismissal reason, and other feedback as the answer text', () => {
    expect(reply(VI_PERMISSION, { option: 'deny', feedback: 'được rồi' })).toEqual({ questionId: 'q_5b2c9e41f7a0', dismiss: true, reason: 'được rồi' });
    expect(reply(VI_PERMISSION, { option: 'deny', feedback: 'Để sau' })).toEqual({ questionId: 'q_5b2c9e41f7a0', text: 'Để sau' });
    expect(reply(['Approve', 'Reject'], { option: 'reject', feedback: 'yes, once the tests pass' })).toMatchObject({ dismiss: true });
  });

  it("never sends a declined free question's feedback as text: ALP would take it for the answer", () => {
    expect(reply(['SQLite', 'Redis'], { option: 'decline', feedback: 'ok' })).toEqual({ questionId: 'q_5b2c9e41f7a0', dismiss: true, reason: 'ok' });
    expect(reply(['SQLite', 'Redis'], { option: 'decline', feedback: 'use Postgres' })).toEqual({
      questionId: 'q_5b2c9e41f7a0',
      dismiss: true,
      reason: 'use Postgres',
    });
    expect(reply(['SQLite', 'Redis'], { option: 'decline', feedback: 'Redis' })).toEqual({ questionId: 'q_5b2c9e41f7a0', dismiss: true, reason: 'Redis' });
    expect(reply(['SQLite', 'Redis'], { option: 'decline' })).toEqual({ questionId: 'q_5b2c9e41f7a0', dismiss: true });
  });
});

describe('the Vietnamese option sets', () => {
  it('recognises the permission set in any order, listing the choices in ALP order', () => {
    const { request, context } = normalize(questionEvent(['Từ chối', 'Luôn cho phép', 'Cho phép lần này']));
    expect(request.kind).toBe('command');
    expect(request.options).toEqual([
      { id: 'allow_once', label: 'Cho phép lần này', outcome: 'approve', style: 'primary' },
      { id: 'always_allow', label: 'Luôn cho phép', outcome: 'approve', style: null },
      { id: 'deny', label: 'Từ chối', outcome: 'deny', style: 'danger' },
    ]);
    expect(context.labels).toEqual({ allow_once: 'Cho phép lần này', always_allow: 'Luôn cho phép', deny: 'Từ chối' });
  });

  it('recognises labels whose diacritics arrive decomposed, and answers with the exact text ALP sent', () => {
    const decomposed = VI_PERMISSION.map((l) => l.normalize('NFD'));
    expect(normalize(questionEvent(decomposed)).request.kind).toBe('command');
    const params = reply(decomposed, { option: 'allow_once' });
    expect(params.text).toBe('Cho phép lần này'.normalize('NFD'));
    expect(params.text).not.toBe('Cho phép lần này');
  });

  it('tells the permission refusal from the confirmation refusal, though both read "Từ chối"', () => {
    const permission = normalize(questionEvent(['Cho phép lần này', 'Từ chối'])).request;
    const confirmation = normalize(questionEvent(['Duyệt', 'Từ chối'])).request;
    expect([permission.kind, permission.options?.map((o) => o.id)]).toEqual(['command', ['allow_once', 'deny']]);
    expect([confirmation.kind, confirmation.options?.map((o) => o.id)]).toEqual(['review', ['approve', 'reject']]);
    expect(reply(['Cho phép lần này', 'Từ chối'], { option: 'deny' }).text).toBe('Từ chối');
    expect(reply(['Duyệt', 'Từ chối'], { option: 'approve' }).text).toBe('Duyệt');
  });

  it('does not mix languages: an English allow beside a Vietnamese refusal is a plain question', () => {
    const { request } = normalize(questionEvent(['Allow once', 'Từ chối']));
    expect(request.kind).toBe('question');
    expect(request.input?.questions?.[0]?.options).toEqual([{ label: 'Allow once' }, { label: 'Từ chối' }]);
  });

  it('treats a set with an extra option, and the hook-trust set, as plain questions', () => {
    expect(normalize(questionEvent(['Duyệt', 'Từ chối', 'Để sau'])).request.kind).toBe('question');
    expect(normalize(questionEvent(['Tin cậy workspace này', 'Để sau'])).request.kind).toBe('question');
  });

  it('maps Vietnamese answers given elsewhere back to their choices', () => {
    const followUp = (answer: string) =>
      alpAdapter.followUp(alpAdapter.followUpSchema.parse({ type: 'question.resolved', questionId: 'q_1', outcome: 'answered', answer }), { query: {} });
    expect(followUp('Luôn cho phép')).toEqual({ kind: 'resolve', nativeKey: 'alp:q_1', status: 'approved', option: 'always_allow' });
    expect(followUp('duyệt')).toEqual({ kind: 'resolve', nativeKey: 'alp:q_1', status: 'approved', option: 'approve' });
    expect(followUp('Từ chối'.normalize('NFD'))).toEqual({ kind: 'resolve', nativeKey: 'alp:q_1', status: 'denied' });
  });
});

describe('alp replies', () => {
  it('answers an expiry with on_timeout "approve" with the first allow label, but still dismisses a question', () => {
    expect(reply(VI_PERMISSION, 'expire', 'approve')).toEqual({ questionId: 'q_5b2c9e41f7a0', text: 'Cho phép lần này' });
    expect(reply(['SQLite', 'Redis'], 'expire', 'approve')).toEqual({ questionId: 'q_5b2c9e41f7a0', dismiss: true });
    expect(reply(VI_PERMISSION, 'expire', 'expire')).toEqual({ questionId: 'q_5b2c9e41f7a0', dismiss: true });
  });

  it('joins a picked suggestion and typed text into the one answer ALP takes', () => {
    const params = reply(['SQLite', 'Redis'], { option: 'submit', fields: { answers: { q_5b2c9e41f7a0: { selected: ['Redis'], text: 'with persistence' } } } });
    expect(params.text).toBe('Redis, with persistence');
  });

  it('always answers with the full question id, never a prefix', () => {
    const id = 'q_5b2c9e41f7a0d3c8e1f2a4b6c8d0e2f4';
    const { context } = normalize(questionEvent(['Approve', 'Reject'], id));
    expect(context.questionId).toBe(id);
  });

  it('refuses a question.resolved frame as a request: it asks nothing', () => {
    expect(() => normalize({ type: 'question.resolved', questionId: 'q_1', outcome: 'timeout' })).toThrow(AppError);
  });

  it('needs the answer of an answered question.resolved', () => {
    const parsed = alpAdapter.followUpSchema.safeParse({ type: 'question.resolved', questionId: 'q_1', outcome: 'answered' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['answer']);
  });
});

describe('alp notifications other than event', () => {
  // ipc-v1 beta.4 sends `terminal.event` beside `event`; its params are not read.
  const terminal = { jsonrpc: '2.0', method: 'terminal.event', params: { sessionId: 's-1', data: 'ls\r\n' } };

  it('asks nothing (422 on requests) and changes nothing (ignored on events), like an event of another type', () => {
    const frame = alpAdapter.frameSchema.parse(terminal);
    expect(() => alpAdapter.normalize(frame, { query: {} })).toThrow(
      expect.objectContaining({ code: 'unsupported_frame', message: expect.stringContaining('"terminal.event"') }),
    );
    expect(alpAdapter.followUp!(alpAdapter.followUpSchema!.parse(terminal), { query: {} })).toMatchObject({
      kind: 'ignored',
      reason: expect.stringContaining('"terminal.event"'),
    });
  });

  it('an event whose type is literally "*" is one more type it does not read (422), not a malformed frame', () => {
    for (const frame of [
      { type: '*' },
      { jsonrpc: '2.0', method: 'event', params: { sessionId: 's-1', epoch: 'e', seq: 1, ts: '2026-10-10T09:12:03.114Z', event: { type: '*' } } },
    ]) {
      const parsed = alpAdapter.frameSchema.safeParse(frame);
      expect(parsed.success, JSON.stringify(frame)).toBe(true);
      expect(() => alpAdapter.normalize(parsed.data!, { query: {} })).toThrow(
        expect.objectContaining({ code: 'unsupported_frame', message: expect.stringContaining('"*"') }),
      );
    }
  });

  it('still refuses a malformed event notification, naming the field', () => {
    expect(alpAdapter.frameSchema.safeParse({ jsonrpc: '2.0', method: 'event', params: { sessionId: 's-1' } }).success).toBe(false);
    expect(alpAdapter.frameSchema.safeParse({ jsonrpc: '2.0', method: 7 }).success).toBe(false);
  });
});

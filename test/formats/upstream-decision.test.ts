import { describe, expect, it } from 'vitest';
import { upstreamDecision } from '../../src/formats/upstream-decision.js';
import type { HandupRequest } from '../../src/requests/request-schema.js';
import { expectValidRequest } from '../helpers/upstream-schemas.js';

const AT = 1767225600000;

const record: HandupRequest = {
  id: '01KDXB5M00000000000000REQ0',
  title: 'Allow bash',
  callback_url: null,
  summary: null,
  source: { integration: null, agent: 'ask', session: 's-1', cwd: null, repo: null, branch: null, host: null },
  kind: 'command',
  risk: 'low',
  previews: [],
  options: [
    { id: 'allow_once', label: 'Allow once', outcome: 'approve' },
    { id: 'always_allow', label: 'Always allow', outcome: 'approve' },
    { id: 'deny', label: 'Deny', outcome: 'deny' },
  ],
  input: null,
  timeout: null,
  on_timeout: 'deny',
  dedupe_key: 'alp:q-1',
  status: 'pending',
  content_hash: 'sha256:' + 'a'.repeat(64),
  created_at: AT - 1000,
  expires_at: null,
  decision: null,
};

const resolve = (status: 'approved' | 'denied' | 'answered' | 'cancelled' | 'expired' | 'dismissed', extra: object = {}) => ({
  kind: 'resolve' as const,
  nativeKey: 'alp:q-1',
  status,
  ...extra,
});

describe('upstreamDecision', () => {
  it('takes the named option and its outcome, echoing the hash, decided by upstream', () => {
    const d = upstreamDecision(record, resolve('approved', { option: 'always_allow', feedback: 'fine' }), AT);
    expect(d).toEqual({
      option: 'always_allow',
      content_hash: record.content_hash,
      outcome: 'approve',
      feedback: 'fine',
      fields: null,
      decided_by: 'upstream',
      decided_at: AT,
    });
    expectValidRequest({ ...record, status: 'approved', decision: d });
  });

  it('falls back to the first option with the outcome the status implies when none is named', () => {
    expect(upstreamDecision(record, resolve('denied'), AT)).toMatchObject({ option: 'deny', outcome: 'deny' });
    expect(upstreamDecision(record, resolve('approved', { option: 'no-such-option' }), AT)).toMatchObject({ option: 'allow_once', outcome: 'approve' });
    expect(upstreamDecision(record, resolve('answered', { fields: { answers: { q: { selected: ['x'] } } } }), AT)).toMatchObject({
      option: 'allow_once',
      fields: { answers: { q: { selected: ['x'] } } },
    });
  });

  it('records no decision for cancelled and expired, and blank feedback as null', () => {
    expect(upstreamDecision(record, resolve('cancelled'), AT)).toBeNull();
    expect(upstreamDecision(record, resolve('expired'), AT)).toBeNull();
    expect(upstreamDecision(record, resolve('denied', { feedback: '  ' }), AT)?.feedback).toBeNull();
  });
});

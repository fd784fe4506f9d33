import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequest } from '../helpers/request-api.js';
import { startTestServer, TEST_STORE, type TestServer } from '../helpers/test-server.js';

/**
 * Bad input (docs/api.md): anything malformed gets a 4xx with a code and a message naming the field, and
 * nothing is stored. One table, one server; after every case the stored state is unchanged.
 */

interface Case {
  name: string;
  method?: string;
  /** Default POST /v1/requests. `{id}` is replaced by a pending request's id, `{hash}` by its hash. */
  path?: string;
  body?: unknown;
  raw?: string | Buffer;
  contentType?: string;
  status: number;
  code: string;
  /** The message must name this (the field, usually). */
  names?: string;
}

const many = <T>(n: number, f: (i: number) => T) => Array.from({ length: n }, (_, i) => f(i));
const question = (id: string) => ({ id, question: `${id}?`, options: [{ label: 'yes' }, { label: 'no' }] });

const CASES: Case[] = [
  // The body as a whole
  { name: 'bad JSON', raw: '{"title": "x",', status: 400, code: 'invalid_request', names: 'JSON' },
  { name: 'empty body', raw: '', status: 400, code: 'invalid_request', names: 'empty' },
  { name: 'a JSON array', body: [{ title: 'x' }], status: 400, code: 'invalid_request', names: 'object' },
  { name: 'JSON null', raw: 'null', status: 400, code: 'invalid_request' },
  { name: 'a JSON string', body: 'title', status: 400, code: 'invalid_request' },
  { name: 'wrong content type', raw: 'title=x', contentType: 'text/plain', status: 415, code: 'unsupported_media_type' },
  { name: 'form content type', raw: 'title=x', contentType: 'application/x-www-form-urlencoded', status: 415, code: 'unsupported_media_type' },
  { name: 'prototype poisoning', raw: '{"title": "x", "__proto__": {"admin": true}}', status: 400, code: 'invalid_request' },
  {
    name: 'bytes that are not UTF-8',
    raw: Buffer.from([0x7b, 0x22, 0x74, 0x69, 0x74, 0x6c, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    status: 400,
    code: 'invalid_request',
    names: 'UTF-8',
  },
  { name: 'a lone surrogate in the title', raw: '{"title": "x\\ud800"}', status: 400, code: 'invalid_request', names: 'title: must be valid Unicode' },
  { name: 'a lone surrogate in a nested key', raw: '{"title": "x", "input": {"a": {"\\udc00": 1}}}', status: 400, code: 'invalid_request', names: 'input.a' },
  {
    name: 'input nested 10000 levels deep',
    raw: `{"title": "x", "input": {"a": ${'['.repeat(10_000)}${']'.repeat(10_000)}}}`,
    status: 400,
    code: 'invalid_request',
    names: 'input: nested deeper than 128',
  },
  { name: 'a number beyond float64 in input', raw: '{"title": "x", "input": {"n": 1e400}}', status: 400, code: 'invalid_request', names: 'input.n' },
  {
    name: 'an integer beyond 2^53 in input (the parse would round it)',
    raw: '{"title": "x", "input": {"id": 12345678901234567891}}',
    status: 400,
    code: 'invalid_request',
    names: 'input.id: the integer is too large to keep exactly',
  },
  {
    name: 'body over 1 MiB',
    body: { title: 'x', input: { blob: 'a'.repeat(1024 * 1024 + 1) } },
    status: 413,
    code: 'payload_too_large',
    names: 'requests.max_body_bytes',
  },

  // Fields and types
  { name: 'missing title', body: { summary: 'x' }, status: 400, code: 'invalid_request', names: 'title' },
  { name: 'title not a string', body: { title: 42 }, status: 400, code: 'invalid_request', names: 'title' },
  { name: 'blank title', body: { title: '   ' }, status: 400, code: 'invalid_request', names: 'title' },
  { name: 'title over 512 bytes', body: { title: 'x'.repeat(513) }, status: 400, code: 'invalid_request', names: 'title' },
  { name: 'title over 512 bytes in 171 characters', body: { title: '€'.repeat(171) }, status: 400, code: 'invalid_request', names: 'title' },
  { name: 'summary over 64 KiB', body: { title: 'x', summary: 'é'.repeat(32 * 1024 + 1) }, status: 400, code: 'invalid_request', names: 'summary' },
  { name: 'input over 64 KiB', body: { title: 'x', input: { raw: 'x'.repeat(64 * 1024) } }, status: 400, code: 'invalid_request', names: 'input' },
  { name: 'summary not a string', body: { title: 'x', summary: ['a'] }, status: 400, code: 'invalid_request', names: 'summary' },
  { name: 'unknown top-level field', body: { title: 'x', priority: 'urgent' }, status: 400, code: 'invalid_request', names: 'priority: unknown field' },
  {
    name: 'unknown field in source',
    body: { title: 'x', source: { agent: 'a', user: 'me' } },
    status: 400,
    code: 'invalid_request',
    names: 'source.user: unknown field',
  },
  { name: 'source field not a string', body: { title: 'x', source: { agent: 7 } }, status: 400, code: 'invalid_request', names: 'source.agent' },
  {
    name: 'unknown field in an option',
    body: { title: 'x', options: [{ id: 'a', label: 'A', outcome: 'approve', color: 'red' }] },
    status: 400,
    code: 'invalid_request',
    names: 'options[0].color: unknown field',
  },
  {
    name: 'unknown field in a preview',
    body: { title: 'x', previews: [{ type: 'text', inline: 'hi', body: 'x' }] },
    status: 400,
    code: 'invalid_request',
    names: 'previews[0].body: unknown field',
  },
  {
    name: 'unknown field in a question',
    body: { title: 'x', kind: 'question', input: { questions: [{ ...question('q'), hint: 'x' }] } },
    status: 400,
    code: 'invalid_request',
    names: 'input.questions[0].hint: unknown field',
  },

  // Enums
  { name: 'bad kind', body: { title: 'x', kind: 'approval' }, status: 400, code: 'invalid_request', names: 'kind' },
  { name: 'bad risk', body: { title: 'x', risk: 'critical' }, status: 400, code: 'invalid_request', names: 'risk' },
  { name: 'bad on_timeout', body: { title: 'x', on_timeout: 'ignore' }, status: 400, code: 'invalid_request', names: 'on_timeout' },
  {
    name: 'bad option outcome',
    body: { title: 'x', options: [{ id: 'a', label: 'A', outcome: 'maybe' }] },
    status: 400,
    code: 'invalid_request',
    names: 'options[0].outcome',
  },
  { name: 'bad preview type', body: { title: 'x', previews: [{ type: 'spreadsheet' }] }, status: 400, code: 'invalid_request', names: 'previews[0].type' },
  { name: 'bad input.feedback', body: { title: 'x', input: { feedback: 'always' } }, status: 400, code: 'invalid_request', names: 'input.feedback' },

  // Durations
  ...['30', '-1s', '2y', '1 h', '400000d', '0s', 'soon', ''].map((timeout): Case => ({
    name: `timeout ${JSON.stringify(timeout)}`,
    body: { title: 'x', timeout },
    status: 400,
    code: 'invalid_request',
    names: 'timeout',
  })),
  { name: 'timeout a number', body: { title: 'x', timeout: 30 }, status: 400, code: 'invalid_request', names: 'timeout' },
  { name: 'bad run_timeout', body: { title: 'x', run_timeout: '10' }, status: 400, code: 'invalid_request', names: 'run_timeout' },

  // Counts and uniqueness
  { name: '0 options', body: { title: 'x', options: [] }, status: 400, code: 'invalid_request', names: 'options' },
  {
    name: '33 options',
    body: { title: 'x', options: many(33, (i) => ({ id: `o${i}`, label: `O${i}`, outcome: 'approve' })) },
    status: 400,
    code: 'invalid_request',
    names: 'options',
  },
  {
    name: 'duplicate option ids',
    body: {
      title: 'x',
      options: [
        { id: 'a', label: 'A', outcome: 'approve' },
        { id: 'a', label: 'B', outcome: 'deny' },
      ],
    },
    status: 400,
    code: 'invalid_request',
    names: 'options[1].id',
  },
  {
    name: '65 previews',
    body: { title: 'x', previews: many(65, () => ({ type: 'text', inline: 'x' })) },
    status: 400,
    code: 'invalid_request',
    names: 'previews',
  },
  {
    name: '11 questions',
    body: { title: 'x', kind: 'question', input: { questions: many(11, (i) => question(`q${i}`)) } },
    status: 400,
    code: 'invalid_request',
    names: 'input.questions',
  },
  { name: '0 questions', body: { title: 'x', kind: 'question', input: { questions: [] } }, status: 400, code: 'invalid_request', names: 'input.questions' },
  {
    name: 'duplicate question ids',
    body: { title: 'x', kind: 'question', input: { questions: [question('q'), question('q')] } },
    status: 400,
    code: 'invalid_request',
    names: 'input.questions[1].id',
  },
  {
    name: 'duplicate option labels in a question',
    body: { title: 'x', kind: 'question', input: { questions: [{ id: 'q', question: 'q?', options: [{ label: 'yes' }, { label: 'yes' }] }] } },
    status: 400,
    code: 'invalid_request',
    names: 'input.questions[0].options[1].label',
  },
  {
    name: 'a question with neither options nor free text',
    body: { title: 'x', kind: 'question', input: { questions: [{ id: 'q', question: 'q?' }] } },
    status: 400,
    code: 'invalid_request',
    names: 'input.questions[0].options',
  },
  { name: 'question kind without questions', body: { title: 'x', kind: 'question' }, status: 400, code: 'invalid_request', names: 'input.questions' },
  { name: 'info with input', body: { title: 'x', kind: 'info', input: { a: 1 } }, status: 400, code: 'invalid_request', names: 'input' },
  {
    name: 'bad blob hash',
    body: { title: 'x', previews: [{ type: 'image', blob: 'sha256:xyz' }] },
    status: 400,
    code: 'invalid_request',
    names: 'previews[0].blob',
  },
  {
    name: 'both inline and content',
    body: { title: 'x', previews: [{ type: 'text', inline: 'a', content: 'b' }] },
    status: 400,
    code: 'invalid_request',
    names: 'previews[0].content',
  },
  { name: 'empty dedupe_key', body: { title: 'x', dedupe_key: '' }, status: 400, code: 'invalid_request', names: 'dedupe_key' },

  // Option and question ids: 1-64 of [A-Za-z0-9_.:-] (they end up in URLs, selectors and replies)
  {
    name: 'an option id with a space',
    body: { title: 'x', options: [{ id: 'a b', label: 'A', outcome: 'approve' }] },
    status: 400,
    code: 'invalid_request',
    names: 'options[0].id',
  },
  {
    name: 'an option id with markup',
    body: { title: 'x', options: [{ id: '<img src=x onerror=alert(1)>', label: 'A', outcome: 'approve' }] },
    status: 400,
    code: 'invalid_request',
    names: 'options[0].id',
  },
  {
    name: 'an option id with a control character',
    body: { title: 'x', options: [{ id: 'ok\u001b[2J', label: 'A', outcome: 'approve' }] },
    status: 400,
    code: 'invalid_request',
    names: 'options[0].id',
  },
  {
    name: 'an option id over 64 characters',
    body: { title: 'x', options: [{ id: 'o'.repeat(65), label: 'A', outcome: 'approve' }] },
    status: 400,
    code: 'invalid_request',
    names: 'options[0].id',
  },
  {
    name: 'a question id with a slash',
    body: { title: 'x', kind: 'question', input: { questions: [question('q/1')] } },
    status: 400,
    code: 'invalid_request',
    names: 'input.questions[0].id',
  },
  {
    name: 'a question id over 64 characters',
    body: { title: 'x', kind: 'question', input: { questions: [question('q'.repeat(65))] } },
    status: 400,
    code: 'invalid_request',
    names: 'input.questions[0].id',
  },
  {
    name: 'a question id "__proto__" (it could never be answered)',
    body: { title: 'x', kind: 'question', input: { questions: [question('__proto__')] } },
    status: 400,
    code: 'invalid_request',
    names: 'input.questions[0].id',
  },

  // Callbacks (default: empty allowlist)
  {
    name: 'callback_url with an empty allowlist',
    body: { title: 'x', callback_url: 'https://hooks.example.com/cb' },
    status: 400,
    code: 'callback_not_allowed',
    names: 'callback_url',
  },

  // List filters
  { name: 'list status=bogus', method: 'GET', path: '/v1/requests?status=bogus', status: 400, code: 'invalid_request', names: 'query.status' },
  {
    name: 'list status with one bad member',
    method: 'GET',
    path: '/v1/requests?status=pending,bogus',
    status: 400,
    code: 'invalid_request',
    names: 'query.status',
  },
  { name: 'list kind=bogus', method: 'GET', path: '/v1/requests?kind=bogus', status: 400, code: 'invalid_request', names: 'query.kind' },
  { name: 'list format=bogus', method: 'GET', path: '/v1/requests?format=bogus', status: 400, code: 'invalid_request', names: 'query.format' },
  { name: 'list limit=0', method: 'GET', path: '/v1/requests?limit=0', status: 400, code: 'invalid_request', names: 'query.limit' },
  { name: 'list limit=501', method: 'GET', path: '/v1/requests?limit=501', status: 400, code: 'invalid_request', names: 'query.limit' },
  { name: 'list limit=ten', method: 'GET', path: '/v1/requests?limit=ten', status: 400, code: 'invalid_request', names: 'query.limit' },
  { name: 'list limit=1.5', method: 'GET', path: '/v1/requests?limit=1.5', status: 400, code: 'invalid_request', names: 'query.limit' },
  ...['0x10', '1e1', '+5', '%2016', '16%20', '0b11', '0o7'].map((limit): Case => ({
    name: `list limit=${limit}`,
    method: 'GET',
    path: `/v1/requests?limit=${limit}`,
    status: 400,
    code: 'invalid_request',
    names: 'query.limit',
  })),
  { name: 'history limit=0x10', method: 'GET', path: '/v1/history?limit=0x10', status: 400, code: 'invalid_request', names: 'query.limit' },
  {
    name: 'list unknown query parameter',
    method: 'GET',
    path: '/v1/requests?sort=asc',
    status: 400,
    code: 'invalid_request',
    names: 'query.sort: unknown field',
  },
  { name: 'history bad cursor', method: 'GET', path: '/v1/history?cursor=bogus', status: 400, code: 'invalid_request', names: 'cursor' },
  { name: 'history outcome=pending', method: 'GET', path: '/v1/history?outcome=pending', status: 400, code: 'invalid_request', names: 'query.outcome' },
  { name: 'history limit=501', method: 'GET', path: '/v1/history?limit=501', status: 400, code: 'invalid_request', names: 'query.limit' },
  {
    name: 'history unknown query parameter',
    method: 'GET',
    path: '/v1/history?before=1',
    status: 400,
    code: 'invalid_request',
    names: 'query.before: unknown field',
  },
  { name: 'an id over 64 characters', method: 'GET', path: `/v1/requests/${'A'.repeat(65)}`, status: 400, code: 'invalid_request', names: 'id' },
  // URLs fastify cannot route answer in the same {error, code} shape.
  {
    name: "an id past the router's parameter limit",
    method: 'GET',
    path: `/v1/requests/${'A'.repeat(200)}`,
    status: 400,
    code: 'invalid_request',
    names: 'params',
  },
  { name: 'a bad percent-encoding in the path', method: 'GET', path: '/v1/requests/%ZZ', status: 400, code: 'invalid_request', names: 'URL' },
  // A WebSocket route asked without an upgrade answers in the error shape, not with an empty 404.
  { name: 'GET /v1/events without an upgrade', method: 'GET', path: '/v1/events', status: 426, code: 'upgrade_required', names: 'WebSocket' },
  { name: 'GET a bridge socket without an upgrade', method: 'GET', path: '/v1/formats/ask/ws', status: 426, code: 'upgrade_required', names: 'WebSocket' },

  // U+0000 where a store keeps the text in a column of its own (PostgreSQL's text cannot hold it)
  {
    name: 'a NUL in dedupe_key',
    body: { title: 'x', dedupe_key: 'a\u0000b' },
    status: 400,
    code: 'invalid_request',
    names: 'dedupe_key: must not contain U+0000',
  },
  { name: 'a NUL in source.agent', body: { title: 'x', source: { agent: 'a\u0000b' } }, status: 400, code: 'invalid_request', names: 'source.agent' },
  { name: 'a NUL in source.session', body: { title: 'x', source: { session: 's\u0000' } }, status: 400, code: 'invalid_request', names: 'source.session' },
  { name: 'list agent with a NUL', method: 'GET', path: '/v1/requests?agent=a%00b', status: 400, code: 'invalid_request', names: 'query.agent' },
  // …nor an id in the path (a 500 on PostgreSQL, a 404 on SQLite, before)
  ...(
    [
      ['GET', '/v1/requests/a%00b'],
      ['GET', '/v1/requests/a%00b/wait'],
      ['GET', '/v1/requests/a%00b/audit'],
      ['GET', '/v1/requests/a%00b/deliveries'],
      ['POST', '/v1/requests/a%00b/cancel'],
      ['DELETE', '/v1/rules/a%00b'],
      ['DELETE', '/v1/mutes/a%00b'],
    ] as const
  ).map(([method, path]): Case => ({ name: `${method} ${path}`, method, path, status: 400, code: 'invalid_request', names: 'id: must not contain U+0000' })),
  {
    name: 'a decision on an id with a NUL',
    path: '/v1/requests/a%00b/decision',
    body: { option: 'approve', content_hash: 'x' },
    status: 400,
    code: 'invalid_decision',
    names: 'id: must not contain U+0000',
  },
  {
    name: 'a native reply of an id with a NUL',
    method: 'GET',
    path: '/v1/formats/ask/requests/a%00b/reply',
    status: 400,
    code: 'invalid_query',
    names: 'id: must not contain U+0000',
  },
  { name: 'history q with a NUL', method: 'GET', path: '/v1/history?q=%00', status: 400, code: 'invalid_request', names: 'query.q' },
  // …nor a native follow-up naming a request by such an id (a 500 on PostgreSQL, a 404 or 202 on SQLite, before)
  ...(
    [
      [
        'ask',
        {
          method: 'session/event',
          params: { sessionId: 's-1', event: { type: 'approval.updated', seq: 3, payload: { id: 'act\u0000', status: 'approved' } } },
        },
      ],
      ['ask', { method: 'session/event', params: { sessionId: 's\u0000', event: { type: 'turn.aborted', seq: 3, payload: { turnId: 't-1' } } } }],
      ['alp', { type: 'question.resolved', questionId: 'q_\u0000', outcome: 'canceled' }],
      ['paperclip', { schema: 'paperclip.prp.event.v1', eventType: 'runtime_request.cancelled', runId: 'run-\u0000', payload: { requestId: 'req-1' } }],
      [
        'claude-code',
        {
          session_id: 's-1',
          transcript_path: '/tmp/t.jsonl',
          cwd: '/tmp',
          hook_event_name: 'PostToolUse',
          tool_name: 'Bash',
          tool_input: { command: 'ls' },
          tool_use_id: 'toolu_\u0000',
          tool_response: {},
        },
      ],
    ] as const
  ).map(([format, body], i): Case => ({
    name: `a ${format} follow-up naming an id with a NUL (${i})`,
    path: `/v1/formats/${format}/events`,
    body,
    status: 400,
    code: 'invalid_frame',
    names: 'must not contain U+0000',
  })),
  {
    name: 'a native session query parameter with a NUL',
    path: '/v1/formats/ask/events?session=s%00',
    body: { type: 'turn.aborted', seq: 3, payload: { turnId: 't-1' } },
    status: 400,
    code: 'invalid_query',
    names: 'query.session: must not contain U+0000',
  },
  { name: 'a mute of an agent with a NUL', path: '/v1/mutes', body: { agent: 't\u0000x', for: '1m' }, status: 400, code: 'invalid_request', names: 'agent' },

  // Query parameters a route does not take, and bodies a route does not read
  { name: 'create with a query parameter', path: '/v1/requests?foo=1', body: { title: 'x' }, status: 400, code: 'invalid_request', names: 'query.foo' },
  { name: 'show with a query parameter', method: 'GET', path: '/v1/requests/{id}?x=1', status: 400, code: 'invalid_request', names: 'query.x' },
  { name: 'audit with a query parameter', method: 'GET', path: '/v1/requests/{id}/audit?x=1', status: 400, code: 'invalid_request', names: 'query.x' },
  { name: 'cancel with a query parameter', path: '/v1/requests/{id}/cancel?reason=x', status: 400, code: 'invalid_request', names: 'query.reason' },
  // Every /v1/ route without a query of its own refuses one (a route hook in app.ts, so a new route cannot forget it).
  ...(
    [
      ['GET', '/v1/tokens?foo=1', undefined],
      ['POST', '/v1/tokens?foo=1', { name: 'qq1' }],
      ['DELETE', '/v1/tokens/nobody?foo=1', undefined],
      ['GET', '/v1/openapi.json?foo=1', undefined],
      ['GET', '/v1/session?foo=1', undefined],
      ['GET', '/v1/requests/{id}/deliveries?foo=1', undefined],
      ['GET', '/v1/rules?foo=1', undefined],
      ['GET', '/v1/auto?foo=1', undefined],
      ['GET', '/v1/mutes?foo=1', undefined],
      ['GET', '/v1/formats?foo=1', undefined],
    ] as const
  ).map(([method, path, body]): Case => ({
    name: `${method} ${path}`,
    method,
    path,
    ...(body ? { body } : {}),
    status: 400,
    code: 'invalid_request',
    names: 'query.foo',
  })),
  { name: 'cancel with a body', path: '/v1/requests/{id}/cancel', body: { reason: 'no longer needed' }, status: 400, code: 'invalid_request', names: 'reason' },
  { name: 'cancel with an array body', path: '/v1/requests/{id}/cancel', body: [1, 2, 3], status: 400, code: 'invalid_request', names: 'no body' },
  {
    name: 'decision with a query parameter',
    path: '/v1/requests/{id}/decision?x=1',
    body: { option: 'approve', content_hash: '{hash}' },
    status: 400,
    code: 'invalid_decision',
    names: 'query.x',
  },
  { name: 'an echoed decision that is not an object', body: { title: 'x', decision: 'lol' }, status: 400, code: 'invalid_request', names: 'decision' },
  { name: 'an echoed run that is not an object', body: { title: 'x', run: 5 }, status: 400, code: 'invalid_request', names: 'run' },
  // …nor one of another shape than the served Request's (handup's Decision and RunClaim, Unix ms)
  {
    name: 'an echoed decision with a number option',
    body: { title: 'x', decision: { option: 5 } },
    status: 400,
    code: 'invalid_request',
    names: 'decision.option',
  },
  {
    name: 'an echoed decision with a stray key',
    body: { title: 'x', decision: { option: 'a', content_hash: 'h', bogus: 1 } },
    status: 400,
    code: 'invalid_request',
    names: 'decision.bogus',
  },
  { name: 'an echoed run without its times', body: { title: 'x', run: {} }, status: 400, code: 'invalid_request', names: 'run.started_at' },
  { name: 'an echoed negative created_at', body: { title: 'x', created_at: -1.5 }, status: 400, code: 'invalid_request', names: 'created_at' },
  { name: 'an echoed negative expires_at', body: { title: 'x', expires_at: -7 }, status: 400, code: 'invalid_request', names: 'expires_at' },
  { name: 'an echoed fractional run_interrupted', body: { title: 'x', run_interrupted: 3.5 }, status: 400, code: 'invalid_request', names: 'run_interrupted' },

  // Decision bodies (on a pending request, which must stay pending)
  {
    name: 'decision unknown field',
    path: '/v1/requests/{id}/decision',
    body: { option: 'approve', content_hash: '{hash}', approved: true },
    status: 400,
    code: 'invalid_decision',
    names: 'approved: unknown field',
  },
  {
    name: 'decision missing option',
    path: '/v1/requests/{id}/decision',
    body: { content_hash: '{hash}' },
    status: 400,
    code: 'invalid_decision',
    names: 'option',
  },
  {
    name: 'decision missing content_hash',
    path: '/v1/requests/{id}/decision',
    body: { option: 'approve' },
    status: 400,
    code: 'invalid_decision',
    names: 'content_hash',
  },
  {
    name: 'decision option not a string',
    path: '/v1/requests/{id}/decision',
    body: { option: 1, content_hash: '{hash}' },
    status: 400,
    code: 'invalid_decision',
    names: 'option',
  },
  {
    name: 'decision bad scope',
    path: '/v1/requests/{id}/decision',
    body: { option: 'approve', content_hash: '{hash}', scope: 'forever' },
    status: 400,
    code: 'invalid_decision',
    names: 'scope',
  },
  {
    name: 'decision unknown field in an answer',
    path: '/v1/requests/{id}/decision',
    body: { option: 'approve', content_hash: '{hash}', fields: { answers: { q: { selected: [], note: 'x' } } } },
    status: 400,
    code: 'invalid_decision',
    names: 'fields.answers.q.note: unknown field',
  },
  {
    name: 'decision feedback with a lone surrogate',
    path: '/v1/requests/{id}/decision',
    raw: '{"option": "deny", "content_hash": "{hash}", "feedback": "\\udfff"}',
    status: 400,
    code: 'invalid_decision',
    names: 'feedback',
  },
  {
    name: 'decision fields with a number beyond float64',
    path: '/v1/requests/{id}/decision',
    raw: '{"option": "approve", "content_hash": "{hash}", "fields": {"n": -1e999}}',
    status: 400,
    code: 'invalid_decision',
    names: 'fields.n',
  },
  { name: 'decision bad JSON', path: '/v1/requests/{id}/decision', raw: '{option', status: 400, code: 'invalid_decision', names: 'JSON' },
  { name: 'decision array body', path: '/v1/requests/{id}/decision', body: [], status: 400, code: 'invalid_decision' },
  {
    name: 'decision wrong content type',
    path: '/v1/requests/{id}/decision',
    raw: 'approve',
    contentType: 'text/plain',
    status: 415,
    code: 'unsupported_media_type',
  },

  // Tokens and blobs
  { name: 'token name with capitals', path: '/v1/tokens', body: { name: 'CI' }, status: 400, code: 'invalid_request', names: 'name' },
  { name: 'token name over 40 characters', path: '/v1/tokens', body: { name: 'a'.repeat(41) }, status: 400, code: 'invalid_request', names: 'name' },
  { name: 'token bad expires', path: '/v1/tokens', body: { name: 'ok', expires: 'never' }, status: 400, code: 'invalid_request', names: 'expires' },
  {
    name: 'token unknown field',
    path: '/v1/tokens',
    body: { name: 'ok', scope: 'admin' },
    status: 400,
    code: 'invalid_request',
    names: 'scope: unknown field',
  },
  { name: 'blob bad hash', method: 'GET', path: '/v1/blobs/sha256:nothex', status: 400, code: 'invalid_request', names: 'hash' },
  { name: 'blob empty upload', path: '/v1/blobs', raw: '', contentType: 'application/octet-stream', status: 400, code: 'invalid_request' },
];

describe('bad input', () => {
  let t: TestServer;
  let pending: { id: string; content_hash: string };
  beforeAll(async () => {
    t = await startTestServer();
    pending = await createRequest(t.api, { title: 'the one stored request' });
  });
  afterAll(async () => t?.close());

  /** Everything a refused call must leave untouched. */
  async function snapshot() {
    const list = await t.api.get('/v1/requests?limit=500');
    // One query for every count: on PostgreSQL each query is a connection of its own.
    const [counts] = await t.sql<Record<string, number | string>>(
      'SELECT (SELECT COUNT(*) FROM requests) AS requests, (SELECT COUNT(*) FROM audit) AS audit, (SELECT COUNT(*) FROM tokens) AS tokens, (SELECT COUNT(*) FROM blobs) AS blobs',
    );
    return {
      listed: list.body,
      requests: Number(counts!.requests),
      audit: Number(counts!.audit),
      tokens: Number(counts!.tokens),
      blobs: Number(counts!.blobs),
    };
  }

  it('a 426 names the protocol to upgrade to', async () => {
    for (const path of ['/v1/events', '/v1/formats/ask/ws']) {
      const res = await t.api.get(path);
      expect(res.status, path).toBe(426);
      expect(res.headers.get('upgrade'), path).toBe('websocket');
      expect(res.headers.get('connection'), path).toMatch(/upgrade/i);
    }
  });

  // A table of cases against one server: a minute, for a loaded machine on PostgreSQL.
  it(`answers ${CASES.length} malformed bodies and parameters with a 4xx, a code and the field, storing nothing`, { timeout: 60_000 }, async () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30);
    const before = await snapshot();
    expect(before.requests).toBe(1);
    for (const c of CASES) {
      const path = (c.path ?? '/v1/requests').replace('{id}', pending.id);
      const body = c.body === undefined ? undefined : JSON.parse(JSON.stringify(c.body).replaceAll('{hash}', pending.content_hash));
      const headers = c.contentType ? { 'content-type': c.contentType } : undefined;
      const method = c.method ?? 'POST';
      const res = await t.api.request(method, path, body, {
        ...(c.raw !== undefined ? { raw: typeof c.raw === 'string' ? c.raw.replaceAll('{hash}', pending.content_hash) : c.raw } : {}),
        ...(headers ? { headers } : {}),
        ...(method === 'POST' && c.raw === undefined && body === undefined ? { raw: '' } : {}),
      });
      expect.soft(res.status, `${c.name}: ${res.text.slice(0, 300)}`).toBe(c.status);
      expect.soft(res.body?.code, `${c.name}: ${res.text.slice(0, 300)}`).toBe(c.code);
      expect.soft(typeof res.body?.error, `${c.name}: error message`).toBe('string');
      if (c.names) expect.soft(res.body?.error ?? '', `${c.name}: the message names ${c.names}`).toContain(c.names);
      expect.soft(await snapshot(), `${c.name}: nothing stored`).toEqual(before);
    }
  });
});

describe('a stored row the daemon cannot read', () => {
  let t: TestServer | undefined;
  afterAll(async () => t?.close());

  it('is a 500 internal_error that quotes nothing of the row, never a 400 blaming the client', async () => {
    t = await startTestServer();
    const r = await createRequest(t.api, { title: 'Deploy' });
    const damage = ['UPDATE requests SET record = ? WHERE id = ?', ['{"title": "secret-in-row', r.id]] as const;
    if (TEST_STORE === 'postgres') await t.sql(`${damage[0]} RETURNING id`, [...damage[1]]);
    else {
      const db = new Database(join(t.dataDir, 'countersign.db'));
      db.prepare(damage[0]).run(...damage[1]);
      db.close();
    }
    const res = await t.api.get(`/v1/requests/${r.id}`);
    expect(res.status, res.text).toBe(500);
    expect(res.body).toEqual({ error: 'internal error', code: 'internal_error' });
  });
});

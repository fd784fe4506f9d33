import { describe, expect, it } from 'vitest';
import { askAdapter, type AskContext } from '../../src/adapters/ask.js';
import { AppError } from '../../src/lib/errors.js';
import type { HandupRequest } from '../../src/requests/request-schema.js';
import { loadSchema, newAjv } from '../helpers/upstream-schemas.js';
import { loadFixtures } from '../helpers/fixtures.js';

const fixtures = loadFixtures('ask');

// The Ask schema is a library of definitions (no root shape): each event, interaction and
// method is checked against its own entry.
const ajv = newAjv();
ajv.addSchema(loadSchema('ask-session-protocol.schema.json'), 'ask');
function definition(group: 'event' | 'interaction' | 'method', name: string) {
  const validate = ajv.getSchema(`ask#/$defs/${group}/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`);
  if (!validate) throw new Error(`the Ask schema has no ${group} "${name}"`);
  return validate;
}
function expectValid(group: 'event' | 'interaction' | 'method', name: string, value: unknown) {
  const validate = definition(group, name);
  expect(validate(value) ? [] : validate.errors, `${group} ${name}: ${JSON.stringify(value).slice(0, 300)}`).toEqual([]);
}

describe('ask fixtures against the upstream schema', () => {
  const upstream = fixtures.filter(([, fx]) => fx.schema_valid === true);
  const replies = fixtures.filter(([, fx]) => fx.kind === 'request' && fx.reply !== null);

  it('covers events, interactions and replies', () => {
    expect(upstream.length).toBeGreaterThanOrEqual(15);
    expect(replies.length).toBeGreaterThanOrEqual(8);
  });

  for (const [file, fx] of upstream) {
    it(`${file}: the frame's event or interaction is valid upstream`, () => {
      // The host's notification is `{method: "session/event", params: {event}}`; only the event is defined.
      const item = fx.frame.method === 'session/event' ? fx.frame.params.event : fx.frame;
      if ('type' in item) expectValid('event', item.type, item);
      else expectValid('interaction', item.kind, item);
    });
  }

  for (const [file, fx] of replies) {
    it(`${file}: the reply is a valid ${fx.reply.method} request`, () => {
      const { id, ...call } = fx.reply;
      expect(typeof id).toBe('number');
      // The host writes no "jsonrpc" member; the method definition rejects anything besides method and params.
      expectValid('method', call.method, call);
    });
  }
});

describe('ask adapter quirks', () => {
  let rpc = 0;
  const env = { now: 0, uuid: () => 'uuid', ulid: () => 'ulid', rpcId: () => ++rpc };
  const ctx = { query: { session: 's-1' } };
  const approval = (payload: Record<string, unknown>) =>
    askAdapter.normalize(askAdapter.frameSchema.parse({ type: 'approval.required', seq: 1, payload: { id: 'act_1', ...payload } }), ctx);
  const userInput = (payload: Record<string, unknown>) =>
    askAdapter.normalize(askAdapter.frameSchema.parse({ id: 'ui_1', kind: 'user_input', status: 'pending', payload }), ctx);

  it('reads args pre-serialised as a JSON string (Ask allows it) as the JSON inside; other strings stay text', () => {
    expect(approval({ toolName: 'bash', args: '{"command":"ls -la"}' }).request.previews).toEqual([
      { type: 'command', command: { shell: 'ls -la' } },
      { type: 'json', title: 'Arguments', inline: '{\n  "command": "ls -la"\n}' },
    ]);
    expect(approval({ toolName: 'bash', args: 'ls -la' }).request.previews).toEqual([{ type: 'text', title: 'Arguments', inline: 'ls -la' }]);
  });

  it('reads the kind from the tool name as Roll does: shell tools are commands, file tools edits', () => {
    expect(approval({ toolName: 'Bash' }).request.kind).toBe('command');
    expect(approval({ toolName: 'write_file' }).request.kind).toBe('edit');
    expect(approval({ toolName: 'web_fetch' }).request.kind).toBe('custom');
  });

  it('keeps autoApprovable, which the record cannot hold, as an audit note', () => {
    expect(approval({ toolName: 'bash', autoApprovable: true }).notes).toEqual([
      'autoApprovable: a rule configured on the Ask host may approve this on its own',
    ]);
    expect(approval({ toolName: 'bash', autoApprovable: false }).notes).toBeUndefined();
  });

  it('collapses repeated suggested answers (the response is the label text) and refuses more than 32', () => {
    const q = userInput({ prompt: 'Pick one', options: ['A', { label: 'A' }, 'B'] }).request.input?.questions?.[0];
    expect(q?.options?.map((o) => o.label)).toEqual(['A', 'B']);
    const many = Array.from({ length: 33 }, (_, i) => `option ${i}`);
    expect(() => userInput({ prompt: 'Pick one', options: many })).toThrow(/payload\.options: 33 suggested answers/);
  });

  it('takes what the schema leaves untyped: numbers and booleans as suggested answers, an empty or long tool name', () => {
    const q = userInput({ prompt: 'How many?', options: [1, 2, true] }).request.input?.questions?.[0];
    expect(q?.options?.map((o) => o.label)).toEqual(['1', '2', 'true']);
    expect(approval({ toolName: '' }).request).toMatchObject({ title: 'Approve a tool call', tool: null });
    expect(approval({ toolName: '部'.repeat(256) }).request).toMatchObject({ title: 'Approve a tool call', tool: '部'.repeat(256) });
  });

  it('takes an empty id, which the schema allows, as the key of its session and that id', () => {
    expect(approval({ id: '', toolName: 'bash' }).nativeKey).toBe('ask:s-1:');
    expect(userInput({ prompt: 'Pick one' }).nativeKey).toBe('ask:s-1:ui_1');
    const empty = askAdapter.normalize(askAdapter.frameSchema.parse({ id: '', kind: 'user_input', status: 'pending', payload: { prompt: 'Pick one' } }), ctx);
    expect(empty.nativeKey).toBe('ask:s-1:');
  });

  it('sends nothing for a request that ended undecided: Ask has no dismissal, and reject would be a decision', () => {
    const context: AskContext = { interaction: 'approval', sessionId: 's-1', id: 'act_1' };
    const expired = { status: 'expired', decision: null } as unknown as HandupRequest;
    expect(askAdapter.renderReply(expired, context, env)).toBeNull();
    // A question submitted by on_timeout "approve" has no answer to send either.
    const unanswered = { status: 'expired', decision: { outcome: 'approve', fields: null } } as unknown as HandupRequest;
    expect(askAdapter.renderReply(unanswered, { ...context, interaction: 'user_input', id: 'ui_1' }, env)).toBeNull();
  });

  it('a turn.aborted naming the empty id, in the frame or the query, ends that one only; naming none, every one', () => {
    const frame = (params: Record<string, unknown> = {}) =>
      askAdapter.followUpSchema.parse({
        method: 'session/event',
        params: { sessionId: 's-1', ...params, event: { type: 'turn.aborted', seq: 3, payload: { turnId: 't-1' } } },
      });
    expect(askAdapter.followUp(frame({ interactionId: '' }), { query: {} })).toMatchObject({ nativeKey: 'ask:s-1:' });
    expect(askAdapter.followUp(frame(), { query: { interaction: '' } })).toMatchObject({ nativeKey: 'ask:s-1:' });
    expect(askAdapter.followUp(frame(), { query: {} })).toMatchObject({ kind: 'resolve-session', session: 's-1' });
  });

  it("refuses a session.ended whose payload names another session than the frame's context", () => {
    const frame = askAdapter.followUpSchema.parse({ type: 'session.ended', seq: 3, payload: { sessionId: 's-9' } });
    const thrown = (() => {
      try {
        askAdapter.followUp(frame, { query: { session: 's-1', interaction: 'act_1' } });
      } catch (err) {
        return err;
      }
    })();
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).code).toBe('invalid_frame');
    expect((thrown as AppError).message).toContain('payload.sessionId: "s-9" disagrees with the session query parameter "s-1"');
  });
});

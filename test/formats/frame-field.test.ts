import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { framePaths, issuesInFrame } from '../../src/formats/frame-field.js';
import { expectError, requestCount } from '../helpers/request-api.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');
const frameOf = (format: string, name: string) => JSON.parse(readFileSync(join(FIXTURES, format, name), 'utf8')).frame;
const LONG = '€'.repeat(200); // 600 bytes of UTF-8 in 200 characters

describe('framePaths', () => {
  it('finds the one path holding each value, arrays included; a value held twice has none', () => {
    const frame = { a: { b: [{ c: 'x' }] }, d: 'y', e: { f: 'y' } };
    expect(framePaths(frame, new Set(['x', 'y', 'z']))).toEqual(
      new Map<string, unknown>([
        ['x', ['a', 'b', 0, 'c']],
        ['y', null],
      ]),
    );
  });

  it('gives up, at once, on a frame with more values than it searches', () => {
    const frame = { pad: new Array(400_000).fill(0), tool: 'x' };
    expect(framePaths(frame, new Set(['x']))).toEqual(new Map());
    const issues = [{ path: ['tool'], message: 'must be at most 512 bytes' }];
    expect(issuesInFrame(issues, { tool: 'x' }, frame)).toEqual(issues);
  });

  it("names the record's field in the same form as any error: input.questions[0].options[1].label", () => {
    const issues = [{ path: ['input', 'questions', 0, 'options', 1, 'label'], message: 'too long' }];
    const [issue] = issuesInFrame(issues, { input: { questions: [{ options: [{}, { label: 'L' }] }] } }, { choices: ['L'] });
    expect(issue).toEqual({ path: ['choices', 0], message: "too long (as the record's input.questions[0].options[1].label)" });
  });

  it('keeps the record field where the value is not in the frame as sent', () => {
    const issues = [{ path: ['title'], message: 'must be at most 512 bytes' }];
    expect(issuesInFrame(issues, { title: 'made up' }, { prompt: 'something else' })).toEqual(issues);
  });
});

describe('a native frame over handup limits names its own field', () => {
  let t: TestServer;
  afterEach(() => t?.close());

  it.each([
    ['paperclip', 'payload.request.details.toolName', 'tool', 'driver-command-approval.json', (f: any) => (f.payload.request.details.toolName = LONG)],
    ['roll', 'event.event.approval.toolName', 'tool', 'e2e-request.json', (f: any) => (f.event.event.approval.toolName = LONG)],
    ['roll', 'event.event.approval.agentName', 'source.agent', 'e2e-request.json', (f: any) => (f.event.event.approval.agentName = LONG)],
    ['ask', 'params.event.payload.toolName', 'tool', 'e2e-request.json', (f: any) => (f.params.event.payload.toolName = LONG)],
    // The same value in two fields: which one the adapter read cannot be told, so the record's name.
    [
      'roll',
      'tool',
      'tool',
      'e2e-request.json',
      (f: any) => {
        f.event.event.approval.toolName = LONG;
        f.event.event.approval.reason = LONG;
      },
    ],
  ])("%s: %s (the record's %s)", async (format, field, recordField, fixture, change) => {
    t = await startTestServer({});
    const frame = frameOf(format, fixture);
    change(frame);
    const res = await t.api.post(`/v1/formats/${format}/requests`, frame);
    expectError(res, 400, 'invalid_frame', field);
    expect(res.body.error).toContain(`must be at most`);
    if (field !== recordField) expect(res.body.error).toContain(`as the record's ${recordField}`);
    expect(res.body.details[0].field).toBe(field);
    expect(await requestCount(t.api)).toBe(0);
  });
});

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/lib/errors.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * GET /v1/openapi.json is a document a client can be generated from: valid per a real OpenAPI
 * validator, with shared components, per-route auth and error statuses, the real content types
 * of the blob routes and the native-format routes' bodies and query; and the TypeScript types
 * openapi-typescript generates from it type-check a small client.
 */
describe('the OpenAPI document', { timeout: 60_000 }, () => {
  let t: TestServer;
  let doc: any;
  const op = (path: string, method: string) => {
    const o = doc.paths[path]?.[method];
    expect(o, `${method.toUpperCase()} ${path} is documented`).toBeDefined();
    return o;
  };
  const errorCodes = (o: any, status: number): string[] => o.responses[status]?.content['application/json'].schema.allOf[1].properties.code.enum ?? [];

  beforeAll(async () => {
    t = await startTestServer();
    const res = await t.api.get('/v1/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body;
  });
  afterAll(async () => t?.close());

  it('is valid OpenAPI 3.1 (@readme/openapi-parser), with no warnings', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(doc));
    expect(result.valid ? [] : result.errors, 'validation errors').toEqual([]);
    expect(result.warnings).toEqual([]);
  });

  it('names shared schemas once as components and refers to them', () => {
    const components = doc.components.schemas;
    for (const name of [
      'Request',
      'Decision',
      'Error',
      'AuditEntry',
      'Option',
      'Preview',
      'Question',
      'Token',
      'Delivery',
      'CreateRequestInput',
      'DecisionBodyInput',
    ]) {
      expect(components, name).toHaveProperty(name);
    }
    // The full record: every field a served Request has.
    expect(Object.keys(components.Request.properties).sort()).toEqual(
      [
        'callback_url',
        'content_hash',
        'created_at',
        'decision',
        'dedupe_key',
        'expires_at',
        'id',
        'input',
        'kind',
        'on_timeout',
        'options',
        'previews',
        'risk',
        'run_timeout',
        'source',
        'status',
        'summary',
        'timeout',
        'title',
        'tool',
      ].sort(),
    );
    const text = JSON.stringify(doc.paths);
    expect(text.match(/"#\/components\/schemas\/Request"/g)!.length).toBeGreaterThanOrEqual(10);
    // Nothing in components that nothing uses.
    const all = JSON.stringify(doc);
    for (const name of Object.keys(components)) expect(all, name).toContain(`"#/components/schemas/${name}"`);
  });

  it('per-route auth: health and sign-in are public, everything else takes the bearer token', () => {
    // Signing out takes the session being ended, as a bearer secret like any other.
    const publicOps = new Set(['get /v1/health', 'post /v1/session']);
    for (const [path, methods] of Object.entries<any>(doc.paths)) {
      for (const [method, o] of Object.entries<any>(methods)) {
        const key = `${method} ${path}`;
        if (publicOps.has(key)) {
          expect(o.security, key).toEqual([]);
          expect(o['x-countersign-auth'], key).toBe('public');
        } else {
          expect(o.security, key).toEqual([{ bearer: [] }]);
          expect(['admin', 'submit', 'metrics'], key).toContain(o['x-countersign-auth']);
          expect(errorCodes(o, 401), key).toEqual(['unauthorized']);
          if (o['x-countersign-auth'] !== 'submit') expect(errorCodes(o, 403), key).toContain('forbidden');
        }
        expect(errorCodes(o, 500), key).toEqual(['internal_error']);
        // Every documented error status carries codes of the catalogue with that status.
        for (const status of Object.keys(o.responses)) {
          if (Number(status) < 400) continue;
          // Health answers 503 with its own body (status "unavailable"), which load balancers read.
          if (key === 'get /v1/health' && status === '503') continue;
          for (const code of errorCodes(o, Number(status))) expect(ERRORS[code as keyof typeof ERRORS], `${key} ${status} ${code}`).toBe(Number(status));
        }
      }
    }
    expect(op('/v1/requests', 'post')['x-countersign-auth']).toBe('submit');
    expect(op('/v1/requests/{id}/decision', 'post')['x-countersign-auth']).toBe('admin');
  });

  it('every error status a route can return', () => {
    const decision = op('/v1/requests/{id}/decision', 'post');
    expect(Object.keys(decision.responses).sort()).toEqual(['200', '400', '401', '403', '404', '409', '412', '413', '415', '500', '503']);
    expect(errorCodes(decision, 400)).toEqual(['invalid_decision']);
    expect(errorCodes(decision, 412)).toEqual(['content_hash_mismatch']);
    const create = op('/v1/requests', 'post');
    expect(errorCodes(create, 400).sort()).toEqual(['callback_not_allowed', 'invalid_request']);
    expect(errorCodes(create, 403)).toEqual(['forbidden']);
    expect(errorCodes(create, 409)).toEqual(['dedupe_conflict']);
    // A submit token's on_timeout=approve without the grant, on a native create as on a handup one.
    expect(errorCodes(op('/v1/formats/{format}/requests', 'post'), 403)).toEqual(['forbidden']);
    const ruleTest = op('/v1/rules/test', 'post');
    expect(errorCodes(ruleTest, 400)).toContain('invalid_query');
    expect(ruleTest.requestBody?.content['application/json']).toBeDefined();
    expect([errorCodes(ruleTest, 413), errorCodes(ruleTest, 415)]).toEqual([['payload_too_large'], ['unsupported_media_type']]);
    const hook = op('/v1/formats/claude-code/hook', 'post');
    expect(hook.requestBody?.content['application/json']).toBeDefined();
    expect(errorCodes(hook, 413)).toEqual(['payload_too_large']);
    expect(errorCodes(hook, 415)).toEqual(['unsupported_media_type']);
    // Each route's own codes, never the whole catalogue of a status.
    const addRule = op('/v1/rules', 'post');
    expect([errorCodes(addRule, 400), errorCodes(addRule, 409)]).toEqual([['invalid_rule'], ['rule_exists']]);
    const removeRule = op('/v1/rules/{id}', 'delete');
    expect([errorCodes(removeRule, 404), errorCodes(removeRule, 409)]).toEqual([['not_found'], ['rule_in_config']]);
    expect(errorCodes(op('/v1/auto', 'put'), 400)).toEqual(['invalid_request']);
    expect(errorCodes(op('/v1/mutes/{id}', 'delete'), 404)).toEqual(['not_found']);
    // A route that takes no body still refuses one it cannot read, as every body is.
    const cancel = op('/v1/requests/{id}/cancel', 'post');
    expect([errorCodes(cancel, 413), errorCodes(cancel, 415)]).toEqual([['payload_too_large'], ['unsupported_media_type']]);
    expect(errorCodes(op('/v1/tokens/{name}', 'delete'), 415)).toEqual(['unsupported_media_type']);
    expect(op('/v1/requests/{id}', 'get').responses['415']).toBeUndefined();
    // Routes that take no body as {} say so; the others require theirs.
    expect(op('/v1/mutes', 'post').requestBody.required).toBe(false);
    expect(op('/v1/hooks/{name}/test', 'post').requestBody.required).toBe(false);
    expect(create.requestBody.required).toBe(true);
    expect(JSON.stringify(doc)).not.toContain('x-countersign-optional-body');
    expect(errorCodes(create, 429)).toEqual(['rate_limited']);
    expect(errorCodes(op('/v1/requests/{id}/cancel', 'post'), 409)).toEqual(['not_pending']);
    expect(errorCodes(op('/v1/tokens', 'post'), 409)).toEqual(['token_exists']);
    expect(errorCodes(op('/v1/session', 'post'), 401)).toEqual(['unauthorized']);
  });

  it("describes what the daemon serves: a rule-decided record and the scoped approval before it fit the document's Request", async () => {
    const ajv = new Ajv2020({ strict: false });
    const valid = ajv.compile({ $ref: '#/components/schemas/Request', components: doc.components });
    const first = (await t.api.post('/v1/requests', { title: 'Run the tests', source: { agent: 'openapi-check' } })).body;
    const scoped = await t.api.post(`/v1/requests/${first.id}/decision`, { option: 'approve', content_hash: first.content_hash, scope: 'always' });
    expect(scoped.body.decision.rule_id).toEqual(expect.any(String));
    const byRule = (await t.api.post('/v1/requests', { title: 'Run the tests', source: { agent: 'openapi-check' } })).body;
    expect(byRule.decision).toMatchObject({ decided_by: 'rule' });
    for (const record of [scoped.body, byRule]) expect(valid(record), JSON.stringify(valid.errors)).toBe(true);
  });

  it('the blob routes: raw bytes in, 201 text/plain hash out; 200 application/octet-stream down', () => {
    const upload = op('/v1/blobs', 'post');
    expect(upload.requestBody.content['application/octet-stream'].schema).toEqual({ type: 'string', format: 'binary' });
    expect(Object.keys(upload.responses)).toContain('201');
    expect(upload.responses[201].content).toEqual({ 'text/plain': { schema: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' } } });
    expect(errorCodes(upload, 413)).toEqual(['payload_too_large', 'quota_exceeded']);
    const download = op('/v1/blobs/{hash}', 'get');
    expect(download.responses[200].content).toEqual({ 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } });
    expect(errorCodes(download, 404)).toEqual(['not_found']);
  });

  it('the native-format routes: the format, the frame body, the query', () => {
    const submit = op('/v1/formats/{format}/requests', 'post');
    const params = Object.fromEntries(submit.parameters.map((p: any) => [`${p.in} ${p.name}`, p]));
    expect(params['path format'].schema.enum).toEqual(['ask', 'paperclip', 'roll', 'alp', 'claude-code']);
    for (const q of ['timeout', 'on_timeout', 'callback_url', 'wait']) expect(params, q).toHaveProperty(`query ${q}`);
    expect(params['query on_timeout'].schema.enum).toEqual(['deny', 'approve', 'expire']);
    expect(submit.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/NativeFrameInput');
    expect(submit.responses[201].content['application/json'].schema.$ref).toBe('#/components/schemas/RequestWithReply');
    expect(errorCodes(submit, 400).sort()).toEqual(['callback_not_allowed', 'invalid_frame', 'invalid_query']);
    expect(errorCodes(submit, 404)).toEqual(['unknown_format']);
    expect(errorCodes(submit, 422)).toEqual(['unsupported_frame']);
    const events = op('/v1/formats/{format}/events', 'post');
    expect(events.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/NativeFrameInput');
    expect(Object.keys(events.responses)).toEqual(expect.arrayContaining(['200', '202']));
    const reply = op('/v1/formats/{format}/requests/{id}/reply', 'get');
    expect(reply.parameters.map((p: any) => `${p.in} ${p.name}`)).toEqual(expect.arrayContaining(['path format', 'path id', 'query wait']));
  });

  describe('a client generated with openapi-typescript', () => {
    const dir = mkdtempSync(join(tmpdir(), 'countersign-openapi-client-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('type-checks, and the types say what the API does', async () => {
      writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(structuredClone(doc))));
      writeFileSync(
        join(dir, 'client.ts'),
        `import type { components, paths } from './api.js';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Request = components['schemas']['Request'];

// A typed call: the body the route takes, the answers it gives.
export async function ask(base: string, token: string, body: Json<paths['/v1/requests']['post']['requestBody']>): Promise<Request> {
  const res = await fetch(base + '/v1/requests', { method: 'POST', headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status === 429) {
    const e = (await res.json()) as Json<paths['/v1/requests']['post']['responses'][429]>;
    const code: 'rate_limited' = e.code;
    throw new Error(code + ': ' + e.error);
  }
  return (await res.json()) as Json<paths['/v1/requests']['post']['responses'][201]>;
}

export function describe(r: Request): string {
  const status: 'pending' | 'approved' | 'denied' | 'answered' | 'dismissed' | 'expired' | 'cancelled' = r.status;
  const decidedBy: string | null | undefined = r.decision?.decided_by;
  return r.id + ' ' + status + ' ' + r.title + ' ' + r.content_hash + ' ' + String(decidedBy) + ' ' + r.options.map((o) => o.id + ':' + o.outcome).join(',');
}

export const body: Json<paths['/v1/requests']['post']['requestBody']> = { title: 'Deploy', kind: 'command', options: [{ id: 'go', label: 'Go', outcome: 'approve' }] };
// @ts-expect-error title is required
export const noTitle: Json<paths['/v1/requests']['post']['requestBody']> = { kind: 'command' };
// @ts-expect-error kind is one of the documented kinds
export const badKind: Json<paths['/v1/requests']['post']['requestBody']> = { title: 'x', kind: 'poem' };

type DecisionErrors = paths['/v1/requests/{id}/decision']['post']['responses'];
export const stale: Json<DecisionErrors[412]>['code'] = 'content_hash_mismatch';
// @ts-expect-error 412 carries only content_hash_mismatch
export const notStale: Json<DecisionErrors[412]>['code'] = 'not_found';

export type BlobHash = paths['/v1/blobs']['post']['responses'][201]['content']['text/plain'];
export const hash: BlobHash = 'sha256:00';
export type Frame = Json<paths['/v1/formats/{format}/requests']['post']['requestBody']>;
export const format: paths['/v1/formats/{format}/requests']['post']['parameters']['path']['format'] = 'ask';
`,
      );
      const tsc = join(import.meta.dirname, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc');
      const args = [
        '--noEmit',
        '--strict',
        '--target',
        'es2022',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--lib',
        'es2022,dom',
        '--skipLibCheck',
        join(dir, 'client.ts'),
      ];
      const result = await promisify(execFile)(process.execPath, [tsc, ...args]).then(
        () => '',
        (err: { stdout?: string }) => err.stdout ?? String(err),
      );
      expect(result).toBe('');
    });
  });
});

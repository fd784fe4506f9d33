import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ReplyEnv } from '../../src/adapters/adapter.js';
import { adapters } from '../../src/adapters/registry.js';
import { AppError, validationError } from '../../src/lib/errors.js';
import { createFormatCatalog } from '../../src/formats/format-catalog.js';
import { upstreamDecision } from '../../src/formats/upstream-decision.js';
import { contentHash } from '../../src/requests/content-hash.js';
import { decide, timeoutDecision } from '../../src/requests/decision-rules.js';
import { draftFromBody } from '../../src/requests/request-draft.js';
import { CreateRequestSchema, type HandupRequest } from '../../src/requests/request-schema.js';
import { FIXTURES_DIR, loadFixtures } from '../helpers/fixtures.js';
import { expectValidRequest } from '../helpers/upstream-schemas.js';

const NOW = 1767225600000;
const formats = createFormatCatalog(adapters);
const REQUEST_ID = '01KDXB5M00000000000000REQ0';

export function fixedReplyEnv(): ReplyEnv {
  let uuids = 0;
  let ulids = 0;
  let rpc = 0;
  return {
    now: NOW,
    uuid: () => `00000000-0000-4000-8000-${(++uuids).toString(16).padStart(12, '0')}`,
    ulid: () => `01KDXB5M${String(++ulids).padStart(18, '0')}`,
    rpcId: () => ++rpc,
  };
}

/**
 * test/fixtures/README.md describes the kinds. A followup fixture may also carry
 * `"stored": {"record": <handup request body, as normalize makes it>, "context": <the adapter's context>}`:
 * the pending request the frame's native key finds, handed to `followUp` as the intake does.
 */

/** The pending record the daemon would store for a normalised request body (fixed id and times). */
function pendingRecord(body: unknown): HandupRequest {
  const { timeoutMs: _ignored, ...draft } = draftFromBody(CreateRequestSchema.parse(body), { defaultTimeout: 'none', integration: null });
  return { id: REQUEST_ID, ...draft, status: 'pending', content_hash: contentHash(draft), created_at: NOW - 60_000, expires_at: null, decision: null };
}

/** Runs a frame through the adapter the way the daemon does: parse, normalise, enforce handup's limits. */
function normalizeFrame(format: string, frame: unknown, query: Record<string, string> = {}) {
  const adapter = formats.get(format)!;
  const parsed = adapter.frameSchema.safeParse(frame);
  if (!parsed.success) throw validationError('invalid_frame', parsed.error.issues);
  const normalized = adapter.normalize(parsed.data, { query });
  const checked = CreateRequestSchema.safeParse(normalized.request);
  if (!checked.success) throw validationError('invalid_frame', checked.error.issues);
  return { adapter, normalized, body: checked.data };
}

describe('wire format contract', () => {
  it('every registered adapter has fixtures and every fixture folder has an adapter', () => {
    const folders = readdirSync(FIXTURES_DIR, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    expect(folders).toEqual(adapters.map((a) => a.format).sort());
    for (const a of adapters) expect(loadFixtures(a.format).length, `fixtures for ${a.format}`).toBeGreaterThanOrEqual(10);
  });

  for (const adapter of adapters) {
    describe(adapter.format, () => {
      for (const [file, fx] of loadFixtures(adapter.format)) {
        it(`${file}: ${fx.description}`, () => {
          if (fx.kind === 'invalid') {
            let caught: unknown;
            try {
              normalizeFrame(adapter.format, fx.frame, fx.query);
            } catch (err) {
              caught = err;
            }
            expect(caught, 'the frame should be refused').toBeInstanceOf(AppError);
            expect((caught as AppError).code).toBe(fx.error.code);
            if (fx.error.message_includes) expect((caught as AppError).message).toContain(fx.error.message_includes);
            return;
          }

          if (fx.kind === 'followup') {
            expect(adapter.followUpSchema, 'this adapter takes no follow-up frames').toBeDefined();
            const parsed = adapter.followUpSchema!.parse(fx.frame);
            const ctx = { query: fx.query ?? {} };
            const bare = adapter.followUp!(parsed, ctx);
            if (!fx.stored) {
              expect(bare).toEqual(fx.expect);
              return;
            }
            // As the intake does: the frame alone names the key, then the stored request is handed over.
            const record = pendingRecord(fx.stored.record);
            expectValidRequest(record);
            const read = adapter.followUp!(parsed, ctx, { record, context: fx.stored.context, now: NOW });
            expect(read).toEqual(fx.expect);
            if (read.kind === 'resolve') {
              expect(bare).toMatchObject({ kind: 'resolve', nativeKey: read.nativeKey });
              // The record the daemon would store once the follow-up is applied is a valid Request.
              expectValidRequest({ ...record, status: read.status, decision: upstreamDecision(record, read, NOW) });
            }
            return;
          }

          const { normalized, body } = normalizeFrame(adapter.format, fx.frame, fx.query);
          const { timeoutMs: _ignored, ...draft } = draftFromBody(body, { defaultTimeout: 'none', integration: null });
          expect(normalized.nativeKey).toBe(fx.expect.native_key);
          expect(draft).toEqual(fx.expect.request);

          const pending = pendingRecord(body);
          expectValidRequest(pending);
          let terminal: HandupRequest;
          if (fx.decide.cancel) terminal = { ...pending, status: 'cancelled' };
          else if (fx.decide.expire) terminal = { ...pending, status: 'expired', decision: timeoutDecision(pending, NOW) };
          else {
            const { status, decision } = decide(pending, { ...fx.decide, content_hash: pending.content_hash }, { decidedBy: 'admin', decidedAt: NOW });
            terminal = { ...pending, status, decision };
          }
          expect(terminal.status).toBe(fx.status);
          expectValidRequest(terminal);
          const reply = adapter.renderReply(terminal, JSON.parse(JSON.stringify(normalized.context)), fixedReplyEnv());
          expect(reply ?? null).toEqual(fx.reply);
        });
      }
    });
  }
});

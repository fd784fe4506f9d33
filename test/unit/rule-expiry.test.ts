import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PolicyEvents, type PolicyEvent } from '../../src/rules/policy-events.js';
import { createRuleExpiry, type RuleExpiry } from '../../src/rules/rule-expiry.js';
import { createRuleService, type RuleService } from '../../src/rules/rule-service.js';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/store.js';
import { createFakeClock, type FakeClock } from '../helpers/fake-clock.js';

const MAX_TIMER_MS = 2 ** 31 - 1;
const HOUR = 3_600_000;

describe('rule expiry timer (fake clock, real SQLite file)', () => {
  let dir: string;
  let store: Store;
  let clock: FakeClock;
  let events: PolicyEvents;
  let rules: RuleService;
  let expiry: RuleExpiry | null;
  let seen: PolicyEvent[];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-rule-expiry-'));
    store = openSqliteStore(join(dir, 'countersign.db'), { synchronous: 'full' });
    clock = createFakeClock();
    events = new PolicyEvents();
    rules = createRuleService({ store, clock, events, configRules: [], sessionScopeTtlMs: 12 * HOUR });
    seen = [];
    events.on((e) => seen.push(e));
    expiry = null;
  });
  afterEach(async () => {
    expiry?.stop();
    await expiry?.idle();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start() {
    expiry = createRuleExpiry({ rules, events, clock, log: pino({ level: 'silent' }) });
    await expiry.start();
    return expiry;
  }

  /** Moves the clock, letting each pass finish (and re-arm) before the next timer fires. */
  async function advance(ms: number) {
    const target = clock.now() + ms;
    for (;;) {
      await expiry?.idle();
      const next = clock.nextAt();
      if (next === null || next > target) break;
      clock.set(next);
    }
    clock.set(target);
    await expiry?.idle();
  }

  async function add(id: string, expiresIn: number | null) {
    await rules.add({ id, match: { agent: 'bot' }, action: 'approve', expires_at: expiresIn === null ? null : clock.now() + expiresIn }, 'admin');
    await expiry?.idle();
  }

  const stored = async () => (await store.policy.rules(0)).map((r) => r.rule.id);
  const version = async () => (await store.policy.state()).version;
  const audit = async () => (await store.policy.audit(100)).map((a) => [a.event, a.actor, a.subject]);

  it('arms no timer when no stored rule expires', async () => {
    await add('forever', null);
    const e = await start();
    expect(e.armedFor()).toBeNull();
    expect(clock.pending()).toBe(0);
  });

  it('fires at the expiry: deletes the rule, audits rule.expired by timeout, bumps the version, emits rules.changed once', async () => {
    await add('forever', null);
    await add('short', HOUR);
    const expiresAt = clock.now() + HOUR;
    const e = await start();
    expect(e.armedFor()).toBe(expiresAt);
    expect(clock.pending()).toBe(1);
    const before = await version();
    seen = [];

    await advance(HOUR - 1);
    expect(await stored()).toEqual(['forever', 'short']);
    expect(seen).toEqual([]);
    await advance(1);
    expect(await stored()).toEqual(['forever']);
    expect(seen).toEqual([{ type: 'rules.changed' }]);
    expect(await version()).toBe(before + 1);
    const [row] = await store.policy.audit(1);
    expect(row).toMatchObject({
      event: 'rule.expired',
      actor: 'timeout',
      at: expiresAt,
      subject: 'short',
      details: { rule: { id: 'short', match: { agent: 'bot' }, action: 'approve' }, expires_at: expiresAt },
    });
    expect(e.armedFor()).toBeNull();
    expect(clock.pending()).toBe(0);
  });

  it('re-arms on rules.changed: an earlier rule added, the armed one removed, a change from another daemon', async () => {
    const e = await start();
    await add('hour', HOUR);
    const hour = clock.now() + HOUR;
    expect(e.armedFor()).toBe(hour);
    await add('minutes', 10 * 60_000);
    expect(e.armedFor()).toBe(clock.now() + 10 * 60_000);
    await add('later', 2 * HOUR);
    expect(e.armedFor()).toBe(clock.now() + 10 * 60_000);
    await rules.remove('minutes', 'admin');
    await e.idle();
    expect(e.armedFor()).toBe(hour);
    expect(clock.pending()).toBe(1);

    // Another daemon on the same store adds a sooner one: its change arrives as a remote event.
    const soon = clock.now() + 60_000;
    await store.write((tx) =>
      tx.policy.insertRule({ rule: { id: 'remote', match: { agent: 'x' }, action: 'deny' }, created_at: 0, created_by: 'admin', expires_at: soon }),
    );
    expect(e.armedFor()).toBe(hour);
    events.emit({ type: 'rules.changed', remote: true });
    await e.idle();
    expect(e.armedFor()).toBe(soon);

    await advance(60_000);
    expect(await stored()).toEqual(['hour', 'later']);
    expect(e.armedFor()).toBe(hour);
    await advance(2 * HOUR);
    expect(await stored()).toEqual([]);
    expect((await audit()).filter(([event]) => event === 'rule.expired')).toEqual([
      ['rule.expired', 'timeout', 'later'],
      ['rule.expired', 'timeout', 'hour'],
      ['rule.expired', 'timeout', 'remote'],
    ]);
  });

  it('deletes at start what expired while it was not running', async () => {
    await add('a', 60_000);
    await add('b', HOUR);
    clock.advance(2 * 60_000); // no timer: nothing happens
    expect(await stored()).toEqual(['a', 'b']);
    const e = await start();
    expect(await stored()).toEqual(['b']);
    expect(e.armedFor()).toBe(clock.now() - 2 * 60_000 + HOUR);
  });

  it('deletes rules expiring at the same moment in one change, each audited', async () => {
    await add('one', HOUR);
    await add('two', HOUR);
    await start();
    const before = await version();
    seen = [];
    await advance(HOUR);
    expect(await stored()).toEqual([]);
    expect(seen).toEqual([{ type: 'rules.changed' }]);
    expect(await version()).toBe(before + 1);
    expect((await audit()).slice(0, 2)).toEqual([
      ['rule.expired', 'timeout', 'two'],
      ['rule.expired', 'timeout', 'one'],
    ]);
  });

  it('reaches expiries beyond the longest timer delay in steps', async () => {
    const e = await start();
    await add('year', 365 * 24 * HOUR);
    await advance(MAX_TIMER_MS);
    expect(await stored()).toEqual(['year']);
    expect(clock.pending()).toBe(1);
    expect(e.armedFor()).toBe(clock.now() - MAX_TIMER_MS + 365 * 24 * HOUR);
    await advance(e.armedFor()! - clock.now());
    expect(await stored()).toEqual([]);
  });

  it('stop() clears the timer and stops following changes; nothing expires after it', async () => {
    const e = await start();
    await add('short', 60_000);
    e.stop();
    expect(clock.pending()).toBe(0);
    await add('shorter', 1000);
    expect(clock.pending()).toBe(0);
    await advance(2 * 60_000);
    expect(await stored()).toEqual(['short', 'shorter']);
  });

  it('expire() with nothing expired changes nothing: no version, no audit, no event', async () => {
    await add('later', HOUR);
    const before = await version();
    const rows = (await store.policy.audit(100)).length;
    seen = [];
    expect(await rules.expire()).toEqual([]);
    expect(await version()).toBe(before);
    expect(await store.policy.audit(100)).toHaveLength(rows);
    expect(seen).toEqual([]);
  });

  it('two expire() at once delete and audit each rule once, and announce once', async () => {
    await add('a', 60_000);
    await add('b', 60_000);
    clock.advance(60_000);
    seen = [];
    const [x, y] = await Promise.all([rules.expire(), rules.expire()]);
    expect([...x, ...y].sort()).toEqual(['a', 'b']);
    expect([x.length, y.length].sort()).toEqual([0, 2]);
    expect((await audit()).filter(([event]) => event === 'rule.expired')).toHaveLength(2);
    expect(seen).toEqual([{ type: 'rules.changed' }]);
  });

  it('a rule stored after an expiry sweeps it first, audited the same way, and can reuse its id', async () => {
    await add('temp', 60_000);
    clock.advance(60_000);
    await add('temp', null);
    expect(await stored()).toEqual(['temp']);
    expect((await audit()).slice(0, 2)).toEqual([
      ['rule.added', 'admin', 'temp'],
      ['rule.expired', 'timeout', 'temp'],
    ]);
  });
});

import type { Clock } from '../lib/clock.js';
import { AppError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { decodeHistoryFacts, encodeHistoryFacts, historyFacts } from '../policy/history-facts.js';
import { requestFacts } from '../policy/request-facts.js';
import { compileRules, firstMatch, ruleOutcome, type CompiledRule, type PolicyRule } from '../policy/rule-evaluation.js';
import type { Rule, StoredRuleInput } from '../policy/rule-schema.js';
import { namesAction, SCOPE_RULE_PREFIX, scopeRuleMatch, type Scope } from '../policy/scope-rule.js';
import { createSimulation, type SimulationResult } from '../policy/simulate-rules.js';
import type { HandupRequest } from '../requests/request-schema.js';
import type { StoredRuleRow } from '../storage/policy-records.js';
import type { Store, WriteTx } from '../storage/store.js';
import { TIMEOUT_ACTOR } from './auto-mode-service.js';
import type { PolicyEvents } from './policy-events.js';

/** A rule as `GET /v1/rules` lists it. */
export interface RuleView {
  id: string;
  source: 'config' | 'stored';
  match: Rule['match'];
  action: Rule['action'];
  feedback?: string;
  risk?: string;
  timeout?: string;
  created_at?: number;
  expires_at?: number | null;
  hits: number;
  last_hit_at: number | null;
}

export interface RuleTestAnswer {
  rule: RuleView | null;
  action: Rule['action'] | 'no_match';
  would_decide: string | null;
  /** Why a matching rule would not decide (a question, no such option, a form to fill). */
  skipped?: string;
}

export interface SimulateOptions {
  rules?: StoredRuleInput[] | undefined;
  since?: number | undefined;
  until?: number | undefined;
  limit?: number | undefined;
}

export interface RuleServiceDeps {
  store: Store;
  clock: Clock;
  events: PolicyEvents;
  /** The config file's `rules:`, evaluated first, in file order. */
  configRules: readonly Rule[];
  /** `policy.session_scope_ttl` in ms: how long a session-scoped approval lasts. */
  sessionScopeTtlMs: number;
}

export const SIMULATION_MAX = 100_000;
const HISTORY_BATCH = 500;
export const SIMULATION_WINDOW_MS = 30 * 86_400_000;
// Read in pages, yielding between them, so a long simulation never holds the event loop for long.
const SIMULATION_PAGE = 5_000;

const fromRow = (row: StoredRuleRow): PolicyRule => ({ ...row.rule, source: 'stored', created_at: row.created_at, expires_at: row.expires_at });

/**
 * Rules: the config file's (compiled once) and the stored ones (compiled once per change, as
 * the store's policy version says), evaluated as one list; stored-rule changes (added, removed,
 * expired) with their audit and events; hits; the dry runs (`test`, `simulate`); and the rules
 * scoped approvals store.
 */
export function createRuleService({ store, clock, events, configRules, sessionScopeTtlMs }: RuleServiceDeps) {
  const config = compileRules(configRules.map((r) => ({ ...r, source: 'config' as const })));
  const configIds = new Set(configRules.map((r) => r.id));
  let cache: { version: number; stored: CompiledRule[]; all: CompiledRule[] } | null = null;

  /** The compiled evaluation list at `version`: recompiled only when the stored rules changed. */
  async function listAt(reads: Pick<WriteTx['policy'], 'rules'>, version: number): Promise<CompiledRule[]> {
    if (cache?.version === version) return cache.all;
    // Expired rules are filtered at evaluation time, so the list is read whole once per change.
    const stored = compileRules((await reads.rules(0)).map(fromRow));
    cache = { version, stored, all: [...config, ...stored] };
    return cache.all;
  }

  async function views(now: number): Promise<RuleView[]> {
    const [rows, hits] = await Promise.all([store.policy.rules(now), store.policy.hits()]);
    const byId = new Map(hits.map((h) => [h.rule_id, h]));
    return [...configRules.map((r): PolicyRule => ({ ...r, source: 'config' })), ...rows.map(fromRow)].map((r) => view(r, byId.get(r.id)));
  }

  function changed(tx: WriteTx) {
    tx.announce({ type: 'rules.changed' });
    tx.afterCommit(() => events.emit({ type: 'rules.changed' }));
  }

  /**
   * Deletes the stored rules expired at `at`, each with a `rule.expired` audit row by `timeout`;
   * the deleted rules' ids. The caller bumps the version and announces the change.
   */
  async function sweep(tx: WriteTx, at: number): Promise<string[]> {
    const gone = await tx.policy.deleteExpired(at);
    for (const row of gone) await tx.policy.appendAudit('rule.expired', TIMEOUT_ACTOR, at, row.rule.id, { rule: row.rule, expires_at: row.expires_at });
    return gone.map((row) => row.rule.id);
  }

  /** Stores a rule at the end of the list, inside the caller's transaction. */
  async function insert(tx: WriteTx, rule: Rule, expiresAt: number | null, actor: string, at: number, details: Record<string, unknown> = {}) {
    if (configIds.has(rule.id)) throw new AppError('rule_exists', `rule "${rule.id}" already exists (in the config file)`);
    // An expired rule keeps its id until swept: sweep first, so the id can be used again.
    await sweep(tx, at);
    if (!(await tx.policy.insertRule({ rule, created_at: at, created_by: actor, expires_at: expiresAt }))) {
      throw new AppError('rule_exists', `rule "${rule.id}" already exists`);
    }
    await tx.policy.bumpVersion();
    await tx.policy.appendAudit('rule.added', actor, at, rule.id, { rule: expiresAt === null ? rule : { ...rule, expires_at: expiresAt }, ...details });
    changed(tx);
  }

  function candidateRules(rules: StoredRuleInput[]): CompiledRule[] {
    const seen = new Set<string>();
    for (const [i, r] of rules.entries()) {
      if (seen.has(r.id)) throw new AppError('invalid_rule', `rules[${i}].id: duplicate rule id "${r.id}"`);
      seen.add(r.id);
    }
    return compileRules(rules.map(({ expires_at, ...r }) => ({ ...r, source: 'stored' as const, expires_at: expires_at ?? null })));
  }

  return {
    list(): Promise<RuleView[]> {
      return views(clock.now());
    },

    /** `POST /v1/rules`: the stored rule, 409 `rule_exists` when its id is taken (config or store). */
    async add(input: StoredRuleInput, actor: string): Promise<RuleView> {
      const at = clock.now();
      const { expires_at = null, ...rule } = input;
      if (expires_at !== null && expires_at <= at) throw new AppError('invalid_rule', 'expires_at: is not in the future');
      await store.write((tx) => insert(tx, rule, expires_at, actor, at));
      return view(fromRow({ rule, created_at: at, created_by: actor, expires_at }), undefined);
    },

    /** `DELETE /v1/rules/{id}`: the removed rule; config rules are 409 `rule_in_config`. */
    async remove(id: string, actor: string): Promise<RuleView> {
      if (configIds.has(id)) throw new AppError('rule_in_config', `rule "${id}" is in the config file: remove it there and restart`);
      const at = clock.now();
      return store.write(async (tx) => {
        const hits = (await tx.policy.hits()).find((h) => h.rule_id === id);
        const row = await tx.policy.deleteRule(id);
        if (!row) throw new AppError('not_found', `rule ${id} not found`);
        await tx.policy.bumpVersion();
        await tx.policy.appendAudit('rule.removed', actor, at, id, { rule: row.rule });
        changed(tx);
        return view(fromRow(row), hits);
      });
    },

    /**
     * Deletes every stored rule expired by now, in one transaction, auditing each; the ids
     * deleted. The version moves and `rules.changed` goes out only when something was deleted,
     * so when several daemons do this at once, only the one that deletes a rule tells of it.
     */
    async expire(): Promise<string[]> {
      const at = clock.now();
      return store.write(async (tx) => {
        const gone = await sweep(tx, at);
        if (gone.length === 0) return gone;
        await tx.policy.bumpVersion();
        changed(tx);
        return gone;
      });
    },

    /** When the next stored rule expires (it may already have): null when none does. */
    nextExpiry(): Promise<number | null> {
      return store.policy.nextRuleExpiry();
    },

    /** `POST /v1/rules/test`: what the current list would do with this request; nothing is stored or counted. */
    async test(record: HandupRequest, format: string): Promise<RuleTestAnswer> {
      const now = clock.now();
      const list = await listAt(store.policy, (await store.policy.state()).version);
      const matched = firstMatch(list, requestFacts(record, format), now);
      if (!matched) return { rule: null, action: 'no_match', would_decide: null };
      const hits = (await store.policy.hits()).find((h) => h.rule_id === matched.rule.id);
      const outcome = ruleOutcome(matched.rule, record, now);
      const answer: RuleTestAnswer = {
        rule: view(matched.rule, hits),
        action: matched.rule.action,
        would_decide: outcome.type === 'decide' ? outcome.decision.option : null,
      };
      if (outcome.type === 'skip') answer.skipped = outcome.reason;
      return answer;
    },

    /** `POST /v1/rules/simulate`: a rule list (default: the current one) replayed over ended requests. */
    async simulate({ rules, since, until, limit }: SimulateOptions): Promise<SimulationResult & { since: number; until: number }> {
      const now = clock.now();
      const to = until ?? now;
      const from = since ?? to - SIMULATION_WINDOW_MS;
      if (from > to) throw new AppError('invalid_rule', 'since: must not be after until');
      const max = Math.min(limit ?? SIMULATION_MAX, SIMULATION_MAX);
      const list = rules
        ? candidateRules(rules)
        : (await listAt(store.policy, (await store.policy.state()).version)).filter((c) => c.rule.expires_at == null || c.rule.expires_at > now);
      const run = createSimulation(list);
      let before: { resolvedAt: number; id: string } | undefined;
      let read = 0;
      while (read < max) {
        const page = await store.policy.ended({ since: from, until: to, before, limit: Math.min(SIMULATION_PAGE, max - read) });
        let lastId = '';
        for (const r of page) {
          const facts = decodeHistoryFacts(r.facts);
          run.add(facts);
          lastId = facts.id;
        }
        read += page.length;
        const last = page[page.length - 1];
        if (!last || page.length < SIMULATION_PAGE) break;
        before = { resolvedAt: last.resolvedAt, id: lastId };
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      return { ...run.result(), since: from, until: to };
    },

    /** The evaluation list for a create, read inside its transaction. */
    async rulesFor(tx: WriteTx, version: number): Promise<CompiledRule[]> {
      return listAt(tx.policy, version);
    },

    /**
     * Stores the approve rule of a scoped approval, in the decision's own
     * transaction; its id. Session scope expires after `policy.session_scope_ttl`. `nativeGrant`:
     * the reply carries the approval as the runtime's own grant for the session; where the
     * request names no action a rule could remember, that grant is all, and no rule is stored (null).
     */
    async addScopeRule(
      tx: WriteTx,
      record: HandupRequest,
      format: string,
      scope: Scope,
      actor: string,
      at: number,
      { nativeGrant = false }: { nativeGrant?: boolean } = {},
    ): Promise<string | null> {
      if (nativeGrant && !namesAction(record, format)) return null;
      const rule: Rule = { id: `${SCOPE_RULE_PREFIX}${newId(at).toLowerCase()}`, match: scopeRuleMatch(record, scope, format), action: 'approve' };
      await insert(tx, rule, scope === 'session' ? at + sessionScopeTtlMs : null, actor, at, { scope, request_id: record.id });
      return rule.id;
    },

    /**
     * Gives every request that ended before the facts table existed its facts (a one-off pass
     * after an upgrade, in the background, in batches). Requests ending meanwhile are indexed by
     * their terminal transition; several daemons doing this at once write each row once.
     */
    async indexHistory(signal?: AbortSignal): Promise<number> {
      if ((await store.policy.state()).historyIndexed) return 0;
      let after = '';
      let indexed = 0;
      for (;;) {
        // Stopped (daemon shutdown): the next start goes through it again, skipping nothing.
        if (signal?.aborted) return indexed;
        const batch = await store.policy.endedRecords(after, HISTORY_BATCH);
        if (batch.length === 0) break;
        await store.write(async (tx) => {
          for (const r of batch) await tx.policy.indexEnded(r.record.id, r.resolvedAt, encodeHistoryFacts(historyFacts(r.record, r.format)));
        });
        indexed += batch.length;
        after = batch[batch.length - 1]!.record.id;
      }
      await store.write((tx) => tx.policy.markHistoryIndexed());
      return indexed;
    },

    /** Refuses to start when a config rule's id is also a stored rule's (ids are unique across both). */
    async checkConfigIds(): Promise<string[]> {
      const stored = await store.policy.rules(clock.now());
      return stored.map((r) => r.rule.id).filter((id) => configIds.has(id));
    },
  };
}

export type RuleService = ReturnType<typeof createRuleService>;

function view(rule: PolicyRule, hits: { hits: number; last_hit_at: number } | undefined): RuleView {
  const out: RuleView = { id: rule.id, source: rule.source, match: rule.match, action: rule.action } as RuleView;
  if (rule.feedback !== undefined) out.feedback = rule.feedback;
  if (rule.risk !== undefined) out.risk = rule.risk;
  if (rule.timeout !== undefined) out.timeout = rule.timeout;
  if (rule.source === 'stored') {
    out.created_at = rule.created_at!;
    out.expires_at = rule.expires_at ?? null;
  }
  out.hits = hits ? Number(hits.hits) : 0;
  out.last_hit_at = hits ? Number(hits.last_hit_at) : null;
  return out;
}

import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { parseDuration } from '../lib/durations.js';
import type { RuleTestAnswer, RuleView } from '../rules/rule-service.js';
import type { SimulationResult } from '../policy/simulate-rules.js';
import { usageError } from './cli-error.js';
import { connect, printJson, type CliContext } from './cli-context.js';
import { COMMON_OPTIONS, expectPositionals, parseOrUsage } from './command-args.js';
import { EXIT_OK } from './exit-codes.js';
import { clean, formatTime, table } from './render.js';

/** Matcher flags of `rules add`: exact keys take comma lists. */
const EXACT = ['agent', 'session', 'integration', 'format', 'kind', 'risk'] as const;
const PATTERNS = ['tool', 'cwd', 'repo', 'command', 'title'] as const;

const ADD_OPTIONS = {
  ...COMMON_OPTIONS,
  action: { type: 'string' },
  feedback: { type: 'string' },
  'set-risk': { type: 'string' },
  'set-timeout': { type: 'string' },
  expires: { type: 'string' },
  rule: { type: 'string' },
  ...Object.fromEntries([...EXACT, ...PATTERNS].map((k) => [k, { type: 'string' as const }])),
} as const;

type SimulationAnswer = SimulationResult & { since: number; until: number };

/** `rules list | add | test | rm | simulate` (admin token). */
export async function rulesCommand(ctx: CliContext, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'list':
    case 'ls':
      return list(ctx, rest);
    case 'add':
      return add(ctx, rest);
    case 'test':
      return test(ctx, rest);
    case 'rm':
    case 'remove':
      return remove(ctx, rest);
    case 'simulate':
      return simulate(ctx, rest);
    case undefined:
      throw usageError('rules: say list, add, test, rm or simulate');
    default:
      throw usageError(`rules: unknown subcommand "${sub}" (list, add, test, rm, simulate)`);
  }
}

async function list(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseOrUsage('rules list', () => parseArgs({ args, options: COMMON_OPTIONS, allowPositionals: true, strict: true }));
  expectPositionals('rules list', positionals, []);
  const rules = await connect(ctx, values).get<RuleView[]>('/v1/rules');
  if (values.json) printJson(ctx, rules);
  else if (rules.length === 0) ctx.out('no rules\n');
  else {
    ctx.out(
      table(
        ['ID', 'SOURCE', 'ACTION', 'HITS', 'LAST HIT', 'MATCH'],
        rules.map((r) => [r.id, r.source, actionText(r), String(r.hits), formatTime(r.last_hit_at), clean(matchText(r.match))]),
      ),
    );
  }
  return EXIT_OK;
}

async function add(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseOrUsage('rules add', () => parseArgs({ args, options: ADD_OPTIONS, allowPositionals: true, strict: true }));
  const v = values as Record<string, string | boolean | undefined>;
  let rule: Record<string, unknown>;
  if (values.rule !== undefined) {
    expectPositionals('rules add', positionals, []);
    const given = await readRules(ctx, '--rule', values.rule);
    if (given.length !== 1) throw usageError('--rule: give one rule (an object), not a list');
    rule = given[0]!;
  } else {
    const [id] = expectPositionals('rules add', positionals, ['id']);
    if (values.action === undefined) throw usageError('rules add: --action approve|deny|ask|dismiss is required');
    const match: Record<string, unknown> = {};
    for (const k of EXACT) {
      const raw = v[k];
      if (typeof raw !== 'string') continue;
      const items = raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      match[k] = items.length === 1 ? items[0] : items;
    }
    for (const k of PATTERNS) if (typeof v[k] === 'string') match[k] = v[k];
    rule = { id, match, action: values.action };
    if (values.feedback !== undefined) rule.feedback = values.feedback;
    if (values['set-risk'] !== undefined) rule.risk = values['set-risk'];
    if (values['set-timeout'] !== undefined) rule.timeout = values['set-timeout'];
  }
  if (values.expires !== undefined) {
    const d = parseDuration(values.expires);
    if (!d.ok) throw usageError(`--expires: ${d.message}`);
    rule.expires_at = Date.now() + d.ms;
  }
  const stored = await connect(ctx, values).post<RuleView>('/v1/rules', rule);
  if (values.json) printJson(ctx, stored);
  else
    ctx.out(
      `added ${stored.id}: ${actionText(stored)} when ${clean(matchText(stored.match))}${stored.expires_at ? ` (until ${formatTime(stored.expires_at)})` : ''}\n`,
    );
  return EXIT_OK;
}

async function test(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseOrUsage('rules test', () =>
    parseArgs({
      args,
      options: { ...COMMON_OPTIONS, request: { type: 'string' }, format: { type: 'string' }, frame: { type: 'string' }, integration: { type: 'string' } },
      allowPositionals: true,
      strict: true,
    }),
  );
  expectPositionals('rules test', positionals, []);
  let body: Record<string, unknown>;
  if (values.frame !== undefined) {
    if (values.format === undefined) throw usageError('rules test: --frame needs --format (the wire format of the frame)');
    body = { format: values.format, frame: await readJson(ctx, '--frame', values.frame) };
    if (values.integration !== undefined) body.integration = values.integration;
  } else if (values.request !== undefined) {
    body = (await readJson(ctx, '--request', values.request)) as Record<string, unknown>;
    if (values.integration !== undefined) body = { format: 'handup', frame: body, integration: values.integration };
  } else {
    throw usageError('rules test: give --request FILE|- (a request as for POST /v1/requests) or --format F --frame FILE|-');
  }
  const answer = await connect(ctx, values).post<RuleTestAnswer>('/v1/rules/test', body);
  if (values.json) printJson(ctx, answer);
  else if (!answer.rule) ctx.out('no rule matches: a person decides (or auto mode, or a decide hook)\n');
  else {
    const what = answer.would_decide
      ? `would decide "${clean(answer.would_decide)}"`
      : answer.action === 'ask'
        ? 'leaves it to a person'
        : `would not decide: ${clean(answer.skipped ?? '')}`;
    ctx.out(`${answer.rule.id} (${answer.rule.source}): ${actionText(answer.rule)}; ${what}\n`);
  }
  return EXIT_OK;
}

async function remove(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseOrUsage('rules rm', () => parseArgs({ args, options: COMMON_OPTIONS, allowPositionals: true, strict: true }));
  const [id] = expectPositionals('rules rm', positionals, ['id']);
  const removed = await connect(ctx, values).delete<RuleView>(`/v1/rules/${encodeURIComponent(id!)}`);
  if (values.json) printJson(ctx, removed);
  else ctx.out(`removed ${removed.id}\n`);
  return EXIT_OK;
}

async function simulate(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseOrUsage('rules simulate', () =>
    parseArgs({
      args,
      options: {
        ...COMMON_OPTIONS,
        rules: { type: 'string' },
        add: { type: 'string' },
        since: { type: 'string' },
        until: { type: 'string' },
        limit: { type: 'string' },
      },
      allowPositionals: true,
      strict: true,
    }),
  );
  expectPositionals('rules simulate', positionals, []);
  if (values.rules !== undefined && values.add !== undefined)
    throw usageError('rules simulate: give --rules (instead of the current list) or --add (after it), not both');
  const api = connect(ctx, values);
  const body: Record<string, unknown> = {};
  if (values.rules !== undefined) body.rules = await readRules(ctx, '--rules', values.rules);
  if (values.add !== undefined) {
    const current = await api.get<RuleView[]>('/v1/rules');
    body.rules = [...current.map(asRule), ...(await readRules(ctx, '--add', values.add))];
  }
  const now = Date.now();
  if (values.since !== undefined) body.since = when('--since', values.since, now);
  if (values.until !== undefined) body.until = when('--until', values.until, now);
  if (values.limit !== undefined) {
    if (!/^\d+$/.test(values.limit)) throw usageError('--limit: must be a whole number');
    body.limit = Number(values.limit);
  }
  const r = await api.post<SimulationAnswer>('/v1/rules/simulate', body);
  if (values.json) {
    printJson(ctx, r);
    return EXIT_OK;
  }
  const w = r.would;
  ctx.out(
    `${r.evaluated} ended requests from ${formatTime(r.since)} to ${formatTime(r.until)}: would approve ${w.approve}, deny ${w.deny}, dismiss ${w.dismiss}, ask ${w.ask}; no rule matched ${w.no_match}\n`,
  );
  if (r.per_rule.length)
    ctx.out(
      `\n${table(
        ['RULE', 'MATCHED', 'DISAGREED'],
        r.per_rule.map((p) => [p.id, String(p.matched), String(p.disagreed)]),
      )}`,
    );
  if (r.disagreements.length) {
    ctx.out(`\ndisagreements (a person decided otherwise, or it was cancelled):\n`);
    ctx.out(
      table(
        ['REQUEST', 'RULE', 'WOULD', 'ACTUAL', 'BY', 'TITLE'],
        r.disagreements.map((d) => [d.request_id, d.rule_id, d.would, d.actual, clean(d.decided_by ?? '-'), clean(d.title)]),
      ),
    );
  }
  return EXIT_OK;
}

/** `30d` (that long ago), an ISO date, or Unix ms. */
function when(flag: string, raw: string, now: number): number {
  if (/^\d+$/.test(raw)) return Number(raw);
  const d = parseDuration(raw);
  if (d.ok) return now - d.ms;
  const t = Date.parse(raw);
  if (Number.isNaN(t)) throw usageError(`${flag}: "${raw}" is not a duration (30d), a date (2026-01-31) or Unix ms`);
  return t;
}

/** A listed rule as a rule to send back (what `GET /v1/rules` adds is dropped). */
function asRule(r: RuleView): Record<string, unknown> {
  const { source: _s, hits: _h, last_hit_at: _l, created_at: _c, ...rule } = r;
  return rule;
}

function actionText(r: Pick<RuleView, 'action' | 'risk' | 'timeout'>): string {
  const extra = [r.risk ? `risk ${r.risk}` : null, r.timeout ? `timeout ${r.timeout}` : null].filter(Boolean).join(', ');
  return extra ? `${r.action} (${extra})` : r.action;
}

function matchText(match: Record<string, unknown>): string {
  return Object.entries(match)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : k === 'command' || k === 'title' ? `/${String(v)}/` : String(v)}`)
    .join(' ');
}

async function readText(ctx: CliContext, flag: string, from: string): Promise<string> {
  try {
    return from === '-' ? await ctx.readStdin() : ctx.readFile(from);
  } catch (err) {
    throw usageError(`${flag}: cannot read ${from}: ${(err as Error).message}`);
  }
}

async function readJson(ctx: CliContext, flag: string, from: string): Promise<unknown> {
  const text = await readText(ctx, flag, from);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw usageError(`${flag}: ${from === '-' ? 'standard input' : from} is not valid JSON: ${(err as Error).message}`);
  }
}

/** One rule or a list, as JSON or YAML (a `rules:` list copied from a config file works too). */
async function readRules(ctx: CliContext, flag: string, from: string): Promise<Record<string, unknown>[]> {
  const text = await readText(ctx, flag, from);
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (err) {
    throw usageError(`${flag}: ${from === '-' ? 'standard input' : from} is neither JSON nor YAML: ${(err as Error).message}`);
  }
  if (isObject(value) && Array.isArray(value.rules)) value = value.rules;
  const list = Array.isArray(value) ? value : [value];
  if (!list.every(isObject)) throw usageError(`${flag}: expected a rule (an object) or a list of rules`);
  return list;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

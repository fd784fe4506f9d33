import type { HandupRequest } from '../requests/request-schema.js';
import { usageError } from './cli-error.js';
import { connect, printJson, type CliContext } from './cli-context.js';
import { COMMON_OPTIONS, expectPositionals, parseCommandArgs, splitPair } from './command-args.js';
import { exitCodeForStatus } from './exit-codes.js';
import { clean, formatTime, outcome, waitJson } from './render.js';
import { waitOptionsFor, waitUntilDecided } from './wait-command.js';

const OPTIONS = {
  ...COMMON_OPTIONS,
  title: { type: 'string' },
  summary: { type: 'string' },
  kind: { type: 'string' },
  risk: { type: 'string' },
  option: { type: 'string', multiple: true },
  timeout: { type: 'string' },
  'on-timeout': { type: 'string' },
  'dedupe-key': { type: 'string' },
  'callback-url': { type: 'string' },
  agent: { type: 'string' },
  session: { type: 'string' },
  cwd: { type: 'string' },
  command: { type: 'string' },
  request: { type: 'string' },
  wait: { type: 'boolean' },
} as const;

type AskValues = ReturnType<typeof parseAsk>['values'];

const parseAsk = (args: string[]) => parseCommandArgs('ask', args, OPTIONS);

/** `ask`: create a request (POST /v1/requests), optionally wait for its outcome. */
export async function askCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseAsk(args);
  expectPositionals('ask', positionals, []);
  const base = values.request !== undefined ? await readRequestJson(ctx, values.request) : {};
  const body = buildAskBody(values, base, { cwd: ctx.cwd, host: ctx.hostname });
  const api = connect(ctx, values);

  const created = await api.post<HandupRequest>('/v1/requests', body);
  if (!values.wait) {
    if (values.json) printJson(ctx, created);
    else ctx.out(`${clean(created.id)} ${clean(created.status)}${created.expires_at != null ? ` (expires ${formatTime(created.expires_at)})` : ''}\n`);
    return exitCodeForStatus(created.status);
  }
  if (!values.json && created.status === 'pending') ctx.err(`waiting for a decision on ${clean(created.id)}…\n`);
  const final = created.status === 'pending' ? await waitUntilDecided(api, created.id, waitOptionsFor(ctx, created)) : created;
  if (values.json) printJson(ctx, waitJson(final));
  else ctx.out(outcome(final));
  return exitCodeForStatus(final.status);
}

/**
 * The POST body: the `--request` JSON (if any) with every given flag laid over it. The CLI
 * fills in where it runs (cwd, host) unless told otherwise; everything else is validated by
 * the daemon, whose 400 names the offending field.
 */
export function buildAskBody(values: AskValues, base: Record<string, unknown>, here: { cwd: string; host: string }): Record<string, unknown> {
  const body: Record<string, unknown> = { ...base };
  const set = (key: string, value: unknown) => {
    if (value !== undefined) body[key] = value;
  };
  set('title', values.title);
  set('summary', values.summary);
  set('kind', values.kind ?? (values.command !== undefined && base.kind === undefined ? 'command' : undefined));
  set('risk', values.risk);
  set('timeout', values.timeout);
  set('on_timeout', values['on-timeout']);
  set('dedupe_key', values['dedupe-key']);
  set('callback_url', values['callback-url']);
  if (values.option?.length) body.options = values.option.map(parseOption);

  const baseSource = isObject(base.source) ? base.source : {};
  const source: Record<string, unknown> = { ...baseSource };
  if (values.agent !== undefined) source.agent = values.agent;
  if (values.session !== undefined) source.session = values.session;
  if (values.cwd !== undefined) source.cwd = values.cwd;
  else if (baseSource.cwd === undefined) source.cwd = here.cwd;
  if (baseSource.host === undefined) source.host = here.host;
  body.source = source;

  if (values.command !== undefined) {
    if (!values.command.trim()) throw usageError('--command: must not be empty');
    const previews = Array.isArray(base.previews) ? [...(base.previews as unknown[])] : [];
    previews.unshift({ type: 'command', command: { shell: values.command, cwd: source.cwd } });
    body.previews = previews;
  }
  if (body.title === undefined) throw usageError('ask: --title is required (or give a whole request with --request FILE)');
  return body;
}

/** `--option id:label[:approve|deny]`; the outcome defaults to approve, except for id "deny". */
export function parseOption(raw: string): { id: string; label: string; outcome: 'approve' | 'deny' } {
  const [id, rest] = splitPair('--option', raw, ':', 'id:label[:approve|deny]');
  const m = /^(.*):(approve|deny)$/.exec(rest);
  const label = m ? m[1]! : rest;
  if (!label) throw usageError(`--option: "${raw}" has an empty label`);
  return { id, label, outcome: m ? (m[2] as 'approve' | 'deny') : id === 'deny' ? 'deny' : 'approve' };
}

async function readRequestJson(ctx: CliContext, from: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = from === '-' ? await ctx.readStdin() : ctx.readFile(from);
  } catch (err) {
    throw usageError(`--request: cannot read ${from}: ${(err as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw usageError(`--request: ${from === '-' ? 'standard input' : from} is not valid JSON: ${(err as Error).message}`);
  }
  if (!isObject(value)) throw usageError('--request: the JSON must be an object (a handup Request)');
  return value;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

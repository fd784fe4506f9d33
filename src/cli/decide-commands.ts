import type { Answer, DecisionBody, HandupRequest, Outcome } from '../requests/request-schema.js';
import type { ApiClient } from './api-client.js';
import { usageError } from './cli-error.js';
import { connect, printJson, type CliContext } from './cli-context.js';
import { COMMON_OPTIONS, expectPositionals, parseCommandArgs, splitPair } from './command-args.js';
import { exitCodeForStatus } from './exit-codes.js';
import { outcome } from './render.js';

const DECIDE_OPTIONS = {
  ...COMMON_OPTIONS,
  option: { type: 'string' },
  message: { type: 'string', short: 'm' },
  scope: { type: 'string' },
} as const;

/** `approve ID [--option X] [-m FEEDBACK] [--scope session|project|always]` */
export async function approveCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('approve', args, DECIDE_OPTIONS);
  const [id] = expectPositionals('approve', positionals, ['id']);
  return decideWith(ctx, connect(ctx, values), id!, values.json, (record) => ({
    option: pickOption(record, 'approve', values.option),
    ...(values.message !== undefined ? { feedback: values.message } : {}),
    ...(values.scope !== undefined ? { scope: values.scope as DecisionBody['scope'] } : {}),
  }));
}

/**
 * `deny ID [--option X] [-m FEEDBACK]`: the feedback is what the agent reads to change course.
 * Optional here, as in handup; a request with `input.feedback: "required_on_deny"` is refused
 * by the daemon (400) without it.
 */
export async function denyCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('deny', args, { ...COMMON_OPTIONS, option: DECIDE_OPTIONS.option, message: DECIDE_OPTIONS.message });
  const [id] = expectPositionals('deny', positionals, ['id']);
  return decideWith(ctx, connect(ctx, values), id!, values.json, (record) => ({
    option: pickOption(record, 'deny', values.option),
    ...(values.message?.trim() ? { feedback: values.message } : {}),
  }));
}

/** `answer ID --select QID=LABEL… --text QID=TEXT… [-m FEEDBACK]`: submits a question request. */
export async function answerCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('answer', args, {
    ...COMMON_OPTIONS,
    select: { type: 'string', multiple: true },
    text: { type: 'string', multiple: true },
    message: DECIDE_OPTIONS.message,
  });
  const [id] = expectPositionals('answer', positionals, ['id']);
  const answers: Record<string, Answer> = {};
  const answerFor = (qid: string) => (answers[qid] ??= { selected: [] });
  for (const raw of values.select ?? []) {
    const [qid, label] = splitPair('--select', raw, '=', 'QUESTION_ID=LABEL');
    answerFor(qid).selected.push(label);
  }
  for (const raw of values.text ?? []) {
    const [qid, text] = splitPair('--text', raw, '=', 'QUESTION_ID=TEXT');
    if (answerFor(qid).text != null) throw usageError(`--text: question "${qid}" is given text twice`);
    answerFor(qid).text = text;
  }
  if (Object.keys(answers).length === 0) throw usageError('answer: give at least one --select QUESTION_ID=LABEL or --text QUESTION_ID=TEXT');
  return decideWith(ctx, connect(ctx, values), id!, values.json, (record) => ({
    option: pickOption(record, 'approve', undefined),
    fields: { answers },
    ...(values.message !== undefined ? { feedback: values.message } : {}),
  }));
}

/**
 * Fetches the request first and sends the `content_hash` of what was fetched: if the request
 * changed in between, the daemon answers 412 instead of applying a decision nobody saw.
 */
async function decideWith(
  ctx: CliContext,
  api: ApiClient,
  id: string,
  json: boolean | undefined,
  build: (record: HandupRequest) => Omit<DecisionBody, 'content_hash'>,
): Promise<number> {
  const path = `/v1/requests/${encodeURIComponent(id)}`;
  const record = await api.get<HandupRequest>(path);
  const decided = await api.post<HandupRequest>(`${path}/decision`, { ...build(record), content_hash: record.content_hash });
  if (json) printJson(ctx, decided);
  else ctx.out(outcome(decided));
  return exitCodeForStatus(decided.status);
}

/** The option to send: the one named (which must have the command's outcome) or the first with it. */
function pickOption(record: HandupRequest, want: Outcome, named: string | undefined): string {
  const command = want === 'approve' ? 'approve' : 'deny';
  if (named !== undefined) {
    const option = record.options.find((o) => o.id === named);
    if (!option) throw usageError(`--option: "${named}" is not an option of ${record.id} (${record.options.map((o) => o.id).join(', ')})`);
    if (option.outcome !== want)
      throw usageError(`--option: "${named}" has outcome ${option.outcome}; use countersign ${option.outcome === 'approve' ? 'approve' : 'deny'}`);
    return option.id;
  }
  const first = record.options.find((o) => o.outcome === want);
  if (!first) throw usageError(`${command}: ${record.id} has no ${want} option (${record.options.map((o) => o.id).join(', ')})`);
  return first.id;
}

import type { HandupRequest } from '../requests/request-schema.js';
import { connect, printJson, type CliContext } from './cli-context.js';
import { COMMON_OPTIONS, expectPositionals, parseCommandArgs } from './command-args.js';
import { EXIT_OK } from './exit-codes.js';
import { requestRows } from './render.js';

const FILTERS = ['status', 'kind', 'format', 'agent', 'session', 'limit'] as const;

/** `ls`: GET /v1/requests, newest first; filters pass through (comma lists allowed). */
export async function listCommand(ctx: CliContext, args: string[]): Promise<number> {
  const options = { ...COMMON_OPTIONS, ...Object.fromEntries(FILTERS.map((f) => [f, { type: 'string' as const }])) } as typeof COMMON_OPTIONS &
    Record<(typeof FILTERS)[number], { type: 'string' }>;
  const { values, positionals } = parseCommandArgs('ls', args, options);
  expectPositionals('ls', positionals, []);
  const query = new URLSearchParams();
  for (const f of FILTERS) if (values[f] !== undefined) query.set(f, values[f]);
  const qs = query.size > 0 ? `?${query}` : '';
  const records = await connect(ctx, values).get<HandupRequest[]>(`/v1/requests${qs}`);
  if (values.json) printJson(ctx, records);
  else ctx.out(requestRows(records));
  return EXIT_OK;
}

import type { HandupRequest } from '../requests/request-schema.js';
import { connect, printJson, type CliContext } from './cli-context.js';
import { COMMON_OPTIONS, expectPositionals, parseCommandArgs } from './command-args.js';
import { exitCodeForStatus } from './exit-codes.js';
import { requestDetail } from './render.js';

/** `show ID`: the request in full; the exit code tells its status. */
export async function showCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('show', args, COMMON_OPTIONS);
  const [id] = expectPositionals('show', positionals, ['id']);
  const record = await connect(ctx, values).get<HandupRequest>(`/v1/requests/${encodeURIComponent(id!)}`);
  if (values.json) printJson(ctx, record);
  else ctx.out(requestDetail(record));
  return exitCodeForStatus(record.status);
}

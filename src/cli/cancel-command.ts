import type { HandupRequest } from '../requests/request-schema.js';
import { connect, printJson, type CliContext } from './cli-context.js';
import { COMMON_OPTIONS, expectPositionals, parseCommandArgs } from './command-args.js';
import { exitCodeForStatus } from './exit-codes.js';
import { outcome } from './render.js';

/** `cancel ID`: POST …/cancel; exits 3 (cancelled) on success. */
export async function cancelCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('cancel', args, COMMON_OPTIONS);
  const [id] = expectPositionals('cancel', positionals, ['id']);
  const record = await connect(ctx, values).post<HandupRequest>(`/v1/requests/${encodeURIComponent(id!)}/cancel`);
  if (values.json) printJson(ctx, record);
  else ctx.out(outcome(record));
  return exitCodeForStatus(record.status);
}

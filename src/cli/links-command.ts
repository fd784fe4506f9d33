import { parseArgs } from 'node:util';
import { usageError } from './cli-error.js';
import { connect, printJson, type CliContext } from './cli-context.js';
import { COMMON_OPTIONS, expectPositionals, parseOrUsage } from './command-args.js';
import { EXIT_OK } from './exit-codes.js';
import { formatTime } from './render.js';

/** `links rotate`: a new decision-link key; every link sent so far stops working (admin token required). */
export async function linksCommand(ctx: CliContext, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'rotate') throw usageError(sub === undefined ? 'links: say rotate' : `links: unknown subcommand "${sub}" (rotate)`);
  const { values, positionals } = parseOrUsage('links rotate', () => parseArgs({ args: rest, options: COMMON_OPTIONS, allowPositionals: true, strict: true }));
  expectPositionals('links rotate', positionals, []);
  const res = await connect(ctx, values).post<{ rotated_at: number }>('/v1/links/rotate');
  if (values.json) printJson(ctx, res);
  else ctx.out(`decision-link key rotated at ${formatTime(res.rotated_at)}: every link sent before is revoked\n`);
  return EXIT_OK;
}

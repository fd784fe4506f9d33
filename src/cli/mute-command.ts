import { parseArgs } from 'node:util';
import { usageError } from './cli-error.js';
import { connect, printJson, type CliContext } from './cli-context.js';
import { COMMON_OPTIONS, expectPositionals, parseOrUsage } from './command-args.js';
import { EXIT_OK } from './exit-codes.js';
import { clean, formatTime, table } from './render.js';

interface Mute {
  id: string;
  agent: string | null;
  session: string | null;
  dismiss_notices: boolean;
  created_at: number;
  expires_at: number | null;
}

const describe = (m: Mute) => `${m.agent === null ? 'any agent' : `agent ${clean(m.agent)}`}${m.session === null ? '' : `, session ${clean(m.session)}`}`;

/**
 * `mute --agent A [--session S] [--for 1h] [--dismiss-notices]` (or `--all` for every source),
 * `mute list`, and `unmute ID` (admin token required).
 */
export async function muteCommand(ctx: CliContext, args: string[]): Promise<number> {
  if (args[0] === 'list') {
    const { values, positionals } = parseOrUsage('mute list', () =>
      parseArgs({ args: args.slice(1), options: COMMON_OPTIONS, allowPositionals: true, strict: true }),
    );
    expectPositionals('mute list', positionals, []);
    const mutes = await connect(ctx, values).get<Mute[]>('/v1/mutes');
    if (values.json) printJson(ctx, mutes);
    else if (mutes.length === 0) ctx.out('no mutes\n');
    else {
      ctx.out(
        table(
          ['ID', 'SOURCE', 'DISMISS NOTICES', 'UNTIL'],
          mutes.map((m) => [m.id, describe(m), m.dismiss_notices ? 'yes' : 'no', m.expires_at === null ? 'removed' : formatTime(m.expires_at)]),
        ),
      );
    }
    return EXIT_OK;
  }
  const { values, positionals } = parseOrUsage('mute', () =>
    parseArgs({
      args,
      options: {
        ...COMMON_OPTIONS,
        agent: { type: 'string' },
        session: { type: 'string' },
        for: { type: 'string' },
        'dismiss-notices': { type: 'boolean' },
        all: { type: 'boolean' },
      },
      allowPositionals: true,
      strict: true,
    }),
  );
  expectPositionals('mute', positionals, []);
  if (values.agent === undefined && values.session === undefined && !values.all) {
    throw usageError('mute: say --agent A and/or --session S (or --all to mute every source), or mute list');
  }
  if (values.all && (values.agent !== undefined || values.session !== undefined)) throw usageError('mute: --all cannot be combined with --agent or --session');
  const body: Record<string, unknown> = {};
  if (values.agent !== undefined) body.agent = values.agent;
  if (values.session !== undefined) body.session = values.session;
  if (values.for !== undefined) body.for = values.for;
  if (values['dismiss-notices']) body.dismiss_notices = true;
  const mute = await connect(ctx, values).post<Mute>('/v1/mutes', body);
  if (values.json) printJson(ctx, mute);
  else ctx.out(`muted ${describe(mute)} until ${mute.expires_at === null ? 'removed' : formatTime(mute.expires_at)} (id ${mute.id})\n`);
  return EXIT_OK;
}

export async function unmuteCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseOrUsage('unmute', () => parseArgs({ args, options: COMMON_OPTIONS, allowPositionals: true, strict: true }));
  const [id] = expectPositionals('unmute', positionals, ['id']);
  const mute = await connect(ctx, values).delete<Mute>(`/v1/mutes/${encodeURIComponent(id!)}`);
  if (values.json) printJson(ctx, mute);
  else ctx.out(`unmuted ${describe(mute)}\n`);
  return EXIT_OK;
}

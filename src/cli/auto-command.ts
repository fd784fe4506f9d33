import { parseArgs } from 'node:util';
import type { AutoView } from '../rules/policy-events.js';
import { usageError } from './cli-error.js';
import { connect, printJson, type CliContext } from './cli-context.js';
import { COMMON_OPTIONS, parseOrUsage } from './command-args.js';
import { EXIT_OK } from './exit-codes.js';
import { formatTime } from './render.js';

const MODES = ['off', 'low', 'all'];

/** `auto` shows auto mode; `auto off|low|all [--for 1h]` sets it (admin token). */
export async function autoCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseOrUsage('auto', () =>
    parseArgs({ args, options: { ...COMMON_OPTIONS, for: { type: 'string' } }, allowPositionals: true, strict: true }),
  );
  if (positionals.length > 1) throw usageError(`auto: unexpected argument "${positionals[1]}"`);
  const [mode] = positionals;
  if (mode !== undefined && !MODES.includes(mode)) throw usageError(`auto: "${mode}" is not a mode (off, low, all)`);
  if (mode === undefined && values.for !== undefined) throw usageError('auto: --for needs a mode (low or all)');
  const api = connect(ctx, values);
  const state =
    mode === undefined
      ? await api.get<AutoView>('/v1/auto')
      : await api.put<AutoView>('/v1/auto', { mode, ...(values.for !== undefined ? { for: values.for } : {}) });
  if (values.json) printJson(ctx, state);
  else ctx.out(describe(state));
  return EXIT_OK;
}

function describe(s: AutoView): string {
  if (s.mode === 'off') return 'auto mode: off (every request not decided by a rule or hook waits for a person)\n';
  const what = s.mode === 'low' ? 'approving new low and medium risk requests' : 'approving new requests of every risk';
  return `auto mode: ${s.mode}, ${what}${s.until !== null ? ` until ${formatTime(s.until)}` : ' until turned off or the daemon restarts'}\n`;
}

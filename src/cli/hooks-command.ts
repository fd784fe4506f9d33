import { parseArgs } from 'node:util';
import { CliError, usageError } from './cli-error.js';
import { connect, printJson, type CliContext } from './cli-context.js';
import { COMMON_OPTIONS, expectPositionals, parseOrUsage } from './command-args.js';
import { EXIT_ERROR, EXIT_OK } from './exit-codes.js';
import { clean, formatTime, table } from './render.js';

interface HookInfo {
  name: string;
  kind: string;
  target: string;
  format: string;
  events: string[];
  last_delivery: { type: string; state: string; finished_at: number | null; created_at: number; last_error: string | null } | null;
}

interface TestResult {
  hook: string;
  type: string;
  ok: boolean;
  status: number | null;
  latency_ms: number;
  error: string | null;
}

/** `hooks list` | `hooks test NAME [--event TYPE]` (admin token required). */
export async function hooksCommand(ctx: CliContext, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'list': {
      const { values, positionals } = parseOrUsage('hooks list', () =>
        parseArgs({ args: rest, options: COMMON_OPTIONS, allowPositionals: true, strict: true }),
      );
      expectPositionals('hooks list', positionals, []);
      const hooks = await connect(ctx, values).get<HookInfo[]>('/v1/hooks');
      if (values.json) printJson(ctx, hooks);
      else if (hooks.length === 0) ctx.out('no hooks configured\n');
      else {
        const last = (h: HookInfo) => {
          const d = h.last_delivery;
          if (!d) return '-';
          return `${d.type} ${d.state} ${formatTime(d.finished_at ?? d.created_at)}${d.last_error ? ` (${clean(d.last_error)})` : ''}`;
        };
        ctx.out(
          table(
            ['NAME', 'KIND', 'FORMAT', 'TARGET', 'LAST DELIVERY'],
            hooks.map((h) => [h.name, h.kind, h.format, clean(h.target), last(h)]),
          ),
        );
      }
      return EXIT_OK;
    }
    case 'test': {
      const { values, positionals } = parseOrUsage('hooks test', () =>
        parseArgs({ args: rest, options: { ...COMMON_OPTIONS, event: { type: 'string' } }, allowPositionals: true, strict: true }),
      );
      const [name] = expectPositionals('hooks test', positionals, ['name']);
      const result = await connect(ctx, values).post<TestResult>(`/v1/hooks/${encodeURIComponent(name!)}/test`, values.event ? { event: values.event } : {});
      if (values.json) printJson(ctx, result);
      else if (result.ok)
        ctx.out(`sent ${result.type} to ${result.hook}: ${result.status === null ? 'ok' : `status ${result.status}`} in ${result.latency_ms} ms\n`);
      if (!result.ok) {
        if (values.json) return EXIT_ERROR;
        throw new CliError('hook_failed', `${result.hook}: ${clean(result.error ?? 'failed')}`);
      }
      return EXIT_OK;
    }
    case undefined:
      throw usageError('hooks: say list or test NAME');
    default:
      throw usageError(`hooks: unknown subcommand "${sub}" (list, test)`);
  }
}

import { parseArgs } from 'node:util';
import { usageError } from './cli-error.js';
import { connect, printJson, type CliContext } from './cli-context.js';
import { COMMON_OPTIONS, expectPositionals, parseOrUsage } from './command-args.js';
import { EXIT_OK } from './exit-codes.js';
import { formatTime, table } from './render.js';

interface TokenInfo {
  name: string;
  created_at: number;
  expires_at: number | null;
  last_used_at?: number | null;
  revoked_at?: number;
}

/** `tokens create NAME [--expires 90d] | list | revoke NAME` (admin token required). */
export async function tokensCommand(ctx: CliContext, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'create': {
      const { values, positionals } = parseOrUsage('tokens create', () =>
        parseArgs({ args: rest, options: { ...COMMON_OPTIONS, expires: { type: 'string' } }, allowPositionals: true, strict: true }),
      );
      const [name] = expectPositionals('tokens create', positionals, ['name']);
      const body = { name, ...(values.expires !== undefined ? { expires: values.expires } : {}) };
      const t = await connect(ctx, values).post<TokenInfo & { token: string }>('/v1/tokens', body);
      if (values.json) printJson(ctx, t);
      else ctx.out(`name:    ${t.name}\ntoken:   ${t.token}\nexpires: ${t.expires_at === null ? 'never' : formatTime(t.expires_at)}\nThe token is shown only this once; store it now.\n`);
      return EXIT_OK;
    }
    case 'list': {
      const { values, positionals } = parseOrUsage('tokens list', () => parseArgs({ args: rest, options: COMMON_OPTIONS, allowPositionals: true, strict: true }));
      expectPositionals('tokens list', positionals, []);
      const list = await connect(ctx, values).get<TokenInfo[]>('/v1/tokens');
      if (values.json) printJson(ctx, list);
      else if (list.length === 0) ctx.out('no submit tokens\n');
      else {
        ctx.out(table(['NAME', 'CREATED', 'EXPIRES', 'LAST USED'], list.map((t) => [t.name, formatTime(t.created_at), t.expires_at === null ? 'never' : formatTime(t.expires_at), formatTime(t.last_used_at)])));
      }
      return EXIT_OK;
    }
    case 'revoke': {
      const { values, positionals } = parseOrUsage('tokens revoke', () => parseArgs({ args: rest, options: COMMON_OPTIONS, allowPositionals: true, strict: true }));
      const [name] = expectPositionals('tokens revoke', positionals, ['name']);
      const t = await connect(ctx, values).delete<TokenInfo>(`/v1/tokens/${encodeURIComponent(name!)}`);
      if (values.json) printJson(ctx, t);
      else ctx.out(`revoked ${t.name}\n`);
      return EXIT_OK;
    }
    case undefined:
      throw usageError('tokens: say create NAME, list or revoke NAME');
    default:
      throw usageError(`tokens: unknown subcommand "${sub}" (create, list, revoke)`);
  }
}

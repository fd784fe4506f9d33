import { usageError } from './cli-error.js';
import { connect, printJson, type CliContext } from './cli-context.js';
import { COMMON_OPTIONS, expectPositionals, parseCommandArgs } from './command-args.js';
import { EXIT_OK } from './exit-codes.js';
import { clean, formatTime, table } from './render.js';

interface TokenInfo {
  name: string;
  created_at: number;
  expires_at: number | null;
  last_used_at?: number | null;
  revoked_at?: number;
  /** What the token may do beyond asking (`resolve_upstream`, `timeout_approve`); the daemon validates the names. */
  grants?: string[];
}

const CREATE_OPTIONS = { ...COMMON_OPTIONS, expires: { type: 'string' }, grant: { type: 'string', multiple: true } } as const;

const grantsText = (t: TokenInfo) => (t.grants?.length ? t.grants.map((g) => clean(g)).join(',') : '-');

/** `tokens create NAME [--expires 90d] [--grant G]... | list | revoke NAME` (admin token required). */
export async function tokensCommand(ctx: CliContext, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'create': {
      const { values, positionals } = parseCommandArgs('tokens create', rest, CREATE_OPTIONS);
      const [name] = expectPositionals('tokens create', positionals, ['name']);
      // Sent only when given, so a daemon that predates grants still creates plain tokens.
      const body = { name, ...(values.expires !== undefined ? { expires: values.expires } : {}), ...(values.grant?.length ? { grants: values.grant } : {}) };
      const t = await connect(ctx, values).post<TokenInfo & { token: string }>('/v1/tokens', body);
      if (values.json) printJson(ctx, t);
      else {
        ctx.out(
          `name:    ${clean(t.name)}\ntoken:   ${clean(t.token)}\nexpires: ${t.expires_at === null ? 'never' : formatTime(t.expires_at)}\n` +
            (t.grants?.length ? `grants:  ${grantsText(t)}\n` : '') +
            'The token is shown only this once; store it now.\n',
        );
      }
      return EXIT_OK;
    }
    case 'list': {
      const { values, positionals } = parseCommandArgs('tokens list', rest, COMMON_OPTIONS);
      expectPositionals('tokens list', positionals, []);
      const list = await connect(ctx, values).get<TokenInfo[]>('/v1/tokens');
      if (values.json) printJson(ctx, list);
      else if (list.length === 0) ctx.out('no submit tokens\n');
      else {
        ctx.out(
          table(
            ['NAME', 'CREATED', 'EXPIRES', 'LAST USED', 'GRANTS'],
            list.map((t) => [
              clean(t.name),
              formatTime(t.created_at),
              t.expires_at === null ? 'never' : formatTime(t.expires_at),
              formatTime(t.last_used_at),
              grantsText(t),
            ]),
          ),
        );
      }
      return EXIT_OK;
    }
    case 'revoke': {
      const { values, positionals } = parseCommandArgs('tokens revoke', rest, COMMON_OPTIONS);
      const [name] = expectPositionals('tokens revoke', positionals, ['name']);
      const t = await connect(ctx, values).delete<TokenInfo>(`/v1/tokens/${encodeURIComponent(name!)}`);
      if (values.json) printJson(ctx, t);
      else ctx.out(`revoked ${clean(t.name)}\n`);
      return EXIT_OK;
    }
    case undefined:
      throw usageError('tokens: say create NAME, list or revoke NAME');
    default:
      throw usageError(`tokens: unknown subcommand "${sub}" (create, list, revoke)`);
  }
}

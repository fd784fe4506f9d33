import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { text } from 'node:stream/consumers';
import { parseArgs } from 'node:util';
import { clientEnv } from '../config.js';
import { askCommand } from './ask-command.js';
import { autoCommand } from './auto-command.js';
import { cancelCommand } from './cancel-command.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './cli-context.js';
import { answerCommand, approveCommand, denyCommand } from './decide-commands.js';
import { EXIT_ERROR, EXIT_OK } from './exit-codes.js';
import { listCommand } from './list-command.js';
import { rulesCommand } from './rules-command.js';
import { serve } from './serve.js';
import { showCommand } from './show-command.js';
import { tokensCommand } from './tokens-command.js';
import { USAGE } from './usage.js';
import { waitCommand } from './wait-command.js';

type Command = (ctx: CliContext, args: string[]) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  ask: askCommand,
  ls: listCommand,
  show: showCommand,
  wait: waitCommand,
  approve: approveCommand,
  deny: denyCommand,
  answer: answerCommand,
  cancel: cancelCommand,
  tokens: tokensCommand,
  rules: rulesCommand,
  auto: autoCommand,
};

/** The real process around a command: stdio, files, where we run, and the client env. */
export function processContext(): CliContext {
  return {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
    readStdin: () => text(process.stdin),
    readFile: (path) => readFileSync(path, 'utf8'),
    cwd: process.cwd(),
    hostname: hostname(),
    env: clientEnv(),
  };
}

/**
 * Dispatches argv to a command and turns every failure into one stderr line naming an error
 * code, with exit code 4. Global options may also come before the command name.
 */
export async function runCli(argv: string[], ctx: CliContext = processContext()): Promise<number> {
  const { command, args } = splitCommand(argv);
  if (command === undefined) {
    ctx.err(USAGE);
    return EXIT_ERROR;
  }
  if (command === 'help' || command === '--help' || command === '-h' || wantsHelp(args)) {
    ctx.out(USAGE);
    return EXIT_OK;
  }
  if (command === 'serve') return serveCommand(ctx, args);
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!run) {
    ctx.err(`countersign: usage: unknown command "${command}" (try countersign help)\n`);
    return EXIT_ERROR;
  }
  try {
    return await run(ctx, args);
  } catch (err) {
    if (err instanceof CliError) {
      ctx.err(`countersign: ${err.code}: ${err.message}${err.code === 'usage' ? ' (try countersign help)' : ''}\n`);
    } else {
      ctx.err(`countersign: internal_error: ${(err as Error).message}\n`);
    }
    return EXIT_ERROR;
  }
}

async function serveCommand(ctx: CliContext, args: string[]): Promise<number> {
  let config: string | undefined;
  try {
    config = parseArgs({ args, options: { config: { type: 'string' } }, strict: true }).values.config;
  } catch (err) {
    ctx.err(`countersign: usage: serve: ${(err as Error).message}\n`);
    return EXIT_ERROR;
  }
  return serve({ config });
}

const GLOBAL_WITH_VALUE = new Set(['--url', '--token']);

/** `countersign --url U ls` and `countersign ls --url U` mean the same. */
function splitCommand(argv: string[]): { command: string | undefined; args: string[] } {
  const leading: string[] = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i]!;
    if (GLOBAL_WITH_VALUE.has(a) && i + 1 < argv.length) leading.push(a, argv[++i]!);
    else if (a === '--json' || a.startsWith('--url=') || a.startsWith('--token=')) leading.push(a);
    else break;
  }
  return { command: argv[i], args: [...argv.slice(i + 1), ...leading] };
}

function wantsHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { text } from 'node:stream/consumers';
import { closestMatch } from '../lib/closest-match.js';
import { clientEnv } from '../client-env.js';
import { CliError } from './cli-error.js';
import type { CliContext } from './cli-context.js';
import { EXIT_ERROR, EXIT_OK } from './exit-codes.js';
import { clean, terminalSafe } from './terminal-text.js';
import { ALIASES, COMMAND_HELP, USAGE } from './usage.js';

type Command = (ctx: CliContext, args: string[]) => Promise<number>;

/**
 * Each command is imported when it runs, so `--help` and the client commands never load the
 * daemon (fastify, SQLite, the adapters) and start in a fraction of the time.
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).serveCommand,
  ask: async () => (await import('./ask-command.js')).askCommand,
  ls: async () => (await import('./list-command.js')).listCommand,
  show: async () => (await import('./show-command.js')).showCommand,
  wait: async () => (await import('./wait-command.js')).waitCommand,
  approve: async () => (await import('./decide-commands.js')).approveCommand,
  deny: async () => (await import('./decide-commands.js')).denyCommand,
  answer: async () => (await import('./decide-commands.js')).answerCommand,
  cancel: async () => (await import('./cancel-command.js')).cancelCommand,
  tokens: async () => (await import('./tokens-command.js')).tokensCommand,
  hook: async () => (await import('./hook-command.js')).hookCommand,
  integrate: async () => (await import('./integrate-command.js')).integrateCommand,
  hooks: async () => (await import('./hooks-command.js')).hooksCommand,
  mute: async () => (await import('./mute-command.js')).muteCommand,
  unmute: async () => (await import('./mute-command.js')).unmuteCommand,
  links: async () => (await import('./links-command.js')).linksCommand,
  rules: async () => (await import('./rules-command.js')).rulesCommand,
  auto: async () => (await import('./auto-command.js')).autoCommand,
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
 * code, with exit code 4. Global options may also come before the command name. Every byte
 * written passes `terminalSafe` (terminal-text.ts): agents choose most of what is printed.
 */
export async function runCli(argv: string[], context: CliContext = processContext()): Promise<number> {
  const ctx: CliContext = { ...context, out: (s) => context.out(terminalSafe(s)), err: (s) => context.err(terminalSafe(s)) };
  const { command: given, args } = splitCommand(argv);
  if (given === undefined) {
    ctx.err(USAGE);
    return EXIT_ERROR;
  }
  if (given === '--version' || given === '-V' || given === 'version') {
    const { VERSION } = await import('../lib/version.js');
    ctx.out(`countersign ${VERSION}\n`);
    return EXIT_OK;
  }
  if (given === 'help' || given === '--help' || given === '-h') {
    const topic = args.find((a) => !a.startsWith('-'));
    if (topic === undefined) {
      ctx.out(USAGE);
      return EXIT_OK;
    }
    const help = COMMAND_HELP[ALIASES[topic] ?? topic];
    if (!Object.hasOwn(COMMAND_HELP, ALIASES[topic] ?? topic) || help === undefined) return unknownCommand(ctx, topic);
    ctx.out(help);
    return EXIT_OK;
  }
  const command = Object.hasOwn(ALIASES, given) ? ALIASES[given]! : given;
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!load) return unknownCommand(ctx, given);
  if (wantsHelp(args)) {
    ctx.out(COMMAND_HELP[command] ?? USAGE);
    return EXIT_OK;
  }
  try {
    return await (
      await load()
    )(ctx, args);
  } catch (err) {
    if (err instanceof CliError) {
      const hint = err.code === 'usage' ? ` (see countersign ${command} --help)` : '';
      ctx.err(`countersign: ${clean(err.code)}: ${clean(err.message)}${hint}\n`);
    } else {
      ctx.err(`countersign: internal_error: ${clean((err as Error).message)}\n`);
    }
    return EXIT_ERROR;
  }
}

function unknownCommand(ctx: CliContext, name: string): number {
  const guess = closestMatch(name, [...Object.keys(COMMANDS), ...Object.keys(ALIASES), 'help']);
  ctx.err(`countersign: usage: unknown command "${clean(name)}"${guess ? ` (did you mean ${guess}?)` : ''}; see countersign help\n`);
  return EXIT_ERROR;
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

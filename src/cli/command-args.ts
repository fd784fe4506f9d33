import { usageError } from './cli-error.js';

/** Options every client command takes, wherever they appear after the command name. */
export const COMMON_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Runs a `node:util` parseArgs call and reports its complaints as usage errors (exit 4). */
export function parseOrUsage<T>(command: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw usageError(`${command}: ${(err as Error).message}`);
  }
}

/** Exactly the positionals a command takes, named in the message when they are wrong. */
export function expectPositionals(command: string, positionals: string[], names: string[]): string[] {
  if (positionals.length < names.length) throw usageError(`${command}: missing ${names.slice(positionals.length).map((n) => n.toUpperCase()).join(' ')}`);
  if (positionals.length > names.length) throw usageError(`${command}: unexpected argument "${positionals[names.length]}"`);
  return positionals;
}

/** Splits `KEY<sep>VALUE` (the value may contain the separator); `flag` names the option in errors. */
export function splitPair(flag: string, raw: string, sep: string, shape: string): [string, string] {
  const at = raw.indexOf(sep);
  if (at <= 0) throw usageError(`${flag}: "${raw}" must look like ${shape}`);
  return [raw.slice(0, at), raw.slice(at + 1)];
}

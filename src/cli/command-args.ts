import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closestMatch } from '../lib/closest-match.js';
import { usageError } from './cli-error.js';

/** Options every client command takes, wherever they appear after the command name. */
export const COMMON_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * `node:util` parseArgs for one command (strict, positionals allowed), with its complaints
 * turned into usage errors a person can act on: the unknown flag and the closest known one.
 */
export function parseCommandArgs<O extends Options>(command: string, args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw usageError(`${command}: ${describeParseError(err as Error & { code?: string }, options)}`);
  }
}

function describeParseError(err: Error & { code?: string }, options: Options): string {
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flag = /^Unknown option '([^']*)'/.exec(err.message)?.[1] ?? '';
    const known = Object.entries(options).flatMap(([name, o]) => [`--${name}`, ...(o.short ? [`-${o.short}`] : [])]);
    const guess = closestMatch(
      flag.replace(/=.*$/, ''),
      known.filter((k) => k.startsWith('--')),
    );
    return `unknown option ${flag}${guess ? ` (did you mean ${guess}?)` : ''}`;
  }
  if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    // "Option '-m, --message <value>' argument missing": name the long flag, the short in brackets.
    const m = /^Option '(-\S+?)(?:, (--\S+))?( <value>)?' (argument missing|does not take an argument)/.exec(err.message);
    if (m) return `${m[2] ? `${m[2]} (${m[1]})` : m[1]} ${m[4] === 'argument missing' ? 'needs a value' : 'takes no value'}`;
  }
  return err.message;
}

/** Runs a command's own `parseArgs` call, turning its complaint into a usage error naming the command. */
export function parseOrUsage<T>(command: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw usageError(`${command}: ${describeParseError(err as Error & { code?: string }, {})}`);
  }
}

/** Exactly the positionals a command takes, named in the message when they are wrong. */
export function expectPositionals(command: string, positionals: string[], names: string[]): string[] {
  if (positionals.length < names.length)
    throw usageError(
      `${command}: missing ${names
        .slice(positionals.length)
        .map((n) => n.toUpperCase())
        .join(' ')}`,
    );
  if (positionals.length > names.length) throw usageError(`${command}: unexpected argument "${positionals[names.length]}"`);
  return positionals;
}

/** Splits `KEY<sep>VALUE` (the value may contain the separator); `flag` names the option in errors. */
export function splitPair(flag: string, raw: string, sep: string, shape: string): [string, string] {
  const at = raw.indexOf(sep);
  if (at <= 0) throw usageError(`${flag}: "${raw}" must look like ${shape}`);
  return [raw.slice(0, at), raw.slice(at + 1)];
}

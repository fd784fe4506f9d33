import type { DestinationStream } from 'pino';
import pretty from 'pino-pretty';

export type LogFormat = 'auto' | 'pretty' | 'json';

/** The output a destination writes to: stdout, or a stream standing in for it (tests). */
export type LogOutput = NodeJS.WritableStream & { isTTY?: boolean };

/**
 * Where log lines go (config `log.format`): JSON lines, or one readable line per entry for
 * `pretty`, and for `auto` when the output is a terminal. Lines are scrubbed of secrets before
 * either (logger.ts). Undefined means pino's own stdout writer: JSON on standard output.
 */
export function logDestination(format: LogFormat, output: LogOutput = process.stdout): DestinationStream | undefined {
  const terminal = output.isTTY === true;
  if (format === 'json' || (format === 'auto' && !terminal)) return output === process.stdout ? undefined : (output as DestinationStream);
  return pretty({
    // stdout by file descriptor (a synchronous writer), never piped into and closed with the stream.
    destination: output === process.stdout ? 1 : output,
    // Colour only where a person reads it: `pretty` into a file or a pipe stays plain text.
    colorize: terminal && pretty.isColorSupported,
    sync: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
  });
}

/**
 * An error the CLI reports as one line on stderr, `countersign: <code>: <message>`, and exit
 * code 4. `code` is the daemon's error code for HTTP errors, or a local one (`usage`,
 * `unreachable`, `no_token`, `bad_response`).
 */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    readonly code: string,
    message: string,
    /** The daemon's HTTP status, when the error is its answer. */
    readonly status?: number,
    /** The system error code, when no answer came (`ECONNREFUSED`, `EPIPE`, …). */
    readonly network?: string,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError('usage', message);

import pino, { type Logger } from 'pino';

/** JSON logs on stdout; secrets and bearer tokens never reach them. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', '*.token', '*.secret'],
      censor: '[redacted]',
    },
  });
}

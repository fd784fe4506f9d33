import pino, { type DestinationStream, type Logger } from 'pino';

/** Keys whose values are credentials wherever they appear (headers, bodies, nested errors). */
const SECRET_KEY = /authorization|cookie|token(?![-_]?(id|name)$)|secret|passw(or)?d|api[-_]?key|credential|x-[a-z0-9-]*session/i;
/** Credentials inside free text: bearer/basic values, countersign's own token prefixes, the session cookie. */
const SECRET_TEXT: Array<[RegExp, string]> = [
  [/\b(Bearer|Basic)\s+[^\s"',;]+/gi, '$1 [redacted]'],
  [/\bcs[atw]_[A-Za-z0-9_-]{8,}/g, '[redacted]'],
  [/(countersign_session=)[^;\s"',]+/gi, '$1[redacted]'],
  // A URL's password (storage.url, a webhook URL with credentials): `scheme://user:***@host`.
  [/(\/\/[^:/@\s"']*):[^@/\s"']*@/g, '$1:***@'],
  // …or as a query parameter, which libpq takes too (`postgres://u@host/db?password=…`).
  [/([?&](?:ssl)?password=)[^&#\s"']*/gi, '$1***'],
];
const MAX_DEPTH = 12;

function scrubText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_TEXT) out = out.replace(pattern, replacement);
  return out;
}

/**
 * A copy of `value` safe to log: credential-named keys are `[redacted]`, bytes in any form
 * (Buffer, typed arrays, ArrayBuffer, Node's `rawPacket` of malformed requests) are replaced
 * by their length, errors are serialised first, and credentials in text are masked. Redacting
 * paths alone cannot do this: the raw bytes of a request hold its headers in no named field.
 */
export function scrubForLog(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (typeof value !== 'object' || value === null) return value;
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return `[${value.byteLength} bytes]`;
  if (seen.has(value)) return '[circular]';
  if (depth >= MAX_DEPTH) return '[too deep]';
  seen.add(value);
  if (value instanceof Error) return scrubForLog(pino.stdSerializers.err(value), depth, seen);
  if (Array.isArray(value)) return value.map((v) => scrubForLog(v, depth + 1, seen));
  // Serialised by JSON anyway: keep what its own toJSON says (a Date, a URL).
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return scrubForLog((value as { toJSON(): unknown }).toJSON(), depth + 1, seen);
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (key === 'rawPacket') continue;
    out[key] = SECRET_KEY.test(key) && v !== null && v !== undefined ? '[redacted]' : scrubForLog(v, depth + 1, seen);
  }
  return out;
}

/** JSON logs on stdout (or `destination`); secrets and bearer tokens never reach them, in any encoding. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    // Every logged object passes through here before serialisation; errors are serialised in it.
    formatters: { log: (object) => scrubForLog(object) as Record<string, unknown> },
    serializers: { err: (err: unknown) => (err instanceof Error ? scrubForLog(err) : err) },
    hooks: {
      logMethod(args, method) {
        // log.error(err) takes its message from the error after this hook: make it explicit here.
        const [first, ...rest] = args as unknown[];
        const spelled = first instanceof Error ? [{ err: first }, ...(rest.length ? rest : [first.message])] : args;
        method.apply(this, spelled.map((a) => (typeof a === 'string' ? scrubText(a) : a)) as Parameters<typeof method>);
      },
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

import { z } from 'zod';
import { formatDuration, parseDuration } from './durations.js';

/**
 * A configured duration (`30s`, `10m`): read trimmed, since a CRLF .env file leaves "\r" at the
 * end of a value (request bodies, unlike configuration, are never trimmed). `none` also takes the
 * word "none"; `max` caps it (a timer cannot wait past 24.8 days), named in the message.
 */
export function durationSchema({ example, none = false, max }: { example: string; none?: boolean; max?: number }) {
  const message = `must be a duration such as ${example}${none ? ', or "none"' : ''}${max === undefined ? '' : `, at most ${formatDuration(max)}`}`;
  return z
    .string()
    .trim()
    .refine((s) => (none && s === 'none') || parseDuration(s, max === undefined ? {} : { max }).ok, { message });
}

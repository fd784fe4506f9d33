import type { Source } from '../requests/request-schema.js';
import type { MuteRow } from '../storage/mute-records.js';

/**
 * The first of `mutes` (all in force) that covers a request's source, or undefined. A mute's
 * agent and session each match when unset or equal; a request without `source.agent` counts
 * as agent `unknown`.
 */
export function mutedBy(mutes: readonly MuteRow[], source: Pick<Source, 'agent' | 'session'>): MuteRow | undefined {
  const agent = source.agent ?? 'unknown';
  return mutes.find((m) => (m.agent === null || m.agent === agent) && (m.session === null || m.session === source.session));
}

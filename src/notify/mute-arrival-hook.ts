import type { ArrivalHook } from '../requests/request-hooks.js';
import { mutedBy } from './mute-match.js';

/**
 * `dismiss_notices`: a `kind: info` notice from a source muted with it is
 * dismissed on arrival, `decided_by: "mute"`, in the creating transaction. Runs after the rules
 * (a rule that matched has already decided the request, and this hook then sees it terminal).
 */
export function createMuteArrivalHook(): ArrivalHook {
  return async (stored, tx, at) => {
    const r = stored.record;
    if (r.kind !== 'info' || r.status !== 'pending') return null;
    const mutes = (await tx.mutes.active(at)).filter((m) => m.dismiss_notices);
    const mute = mutedBy(mutes, r.source);
    const option = r.options.find((o) => o.outcome === 'deny');
    if (!mute || !option) return null;
    return {
      status: 'dismissed',
      decision: { option: option.id, content_hash: r.content_hash, outcome: 'deny', feedback: null, fields: null, decided_by: 'mute', decided_at: at },
      actor: 'mute',
      details: { mute_id: mute.id },
    };
  };
}

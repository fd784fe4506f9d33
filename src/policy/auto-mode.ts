import { decide } from '../requests/decision-rules.js';
import type { Decision, HandupRequest, Status } from '../requests/request-schema.js';

export const AUTO_MODES = ['off', 'low', 'all'] as const;
export type AutoModeName = (typeof AUTO_MODES)[number];

/** Auto mode as stored: the mode, and when it turns itself off (null: not by itself). */
export interface AutoState {
  mode: AutoModeName;
  until: number | null;
  set_at: number | null;
  set_by: string | null;
}

export const AUTO_OFF: AutoState = Object.freeze({ mode: 'off', until: null, set_at: null, set_by: null });

/** The mode in force at `now`: a mode whose `until` has passed is off. */
export function effectiveMode(state: Pick<AutoState, 'mode' | 'until'>, now: number): AutoModeName {
  return state.until !== null && state.until <= now ? 'off' : state.mode;
}

/**
 * Why auto mode must leave this request to a person, or null when it may approve
 * it: never questions, info notices, forms (`input.fields`), free text, a deny that needs
 * feedback, or a request without exactly one approve option; `low` only risk low and medium.
 */
export function autoRefusal(record: HandupRequest, mode: Exclude<AutoModeName, 'off'>): string | null {
  if (record.kind === 'question' || record.kind === 'info') return `kind ${record.kind}`;
  if (mode === 'low' && record.risk === 'high') return 'risk high';
  const input = record.input as Record<string, unknown> | null;
  if (input?.fields != null) return 'input.fields';
  if (input?.allow_free_text) return 'input.allow_free_text';
  if (input?.feedback === 'required_on_deny') return 'input.feedback required_on_deny';
  if (record.options.filter((o) => o.outcome === 'approve').length !== 1) return 'not exactly one approve option';
  return null;
}

/**
 * The decision auto mode takes on a new request, or null when it leaves it pending. `personOnly`:
 * option ids only a person may choose (a grant for the whole session), never taken here.
 */
export function autoDecision(
  record: HandupRequest,
  mode: AutoModeName,
  at: number,
  personOnly: readonly string[] = [],
): { status: Exclude<Status, 'pending'>; decision: Decision } | null {
  if (mode === 'off' || autoRefusal(record, mode) !== null) return null;
  const option = record.options.find((o) => o.outcome === 'approve')!;
  if (personOnly.includes(option.id)) return null;
  return decide(record, { option: option.id, content_hash: record.content_hash }, { decidedBy: 'auto', decidedAt: at });
}

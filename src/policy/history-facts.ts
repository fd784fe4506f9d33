import type { HandupRequest, Outcome } from '../requests/request-schema.js';
import { requestFacts, type RequestFacts } from './request-facts.js';

/**
 * What the simulation needs of an ended request, and nothing else: the matcher facts, what a
 * rule could decide (options, forms, required feedback), and how it actually ended. Kept beside
 * every ended request (a few hundred bytes, however large its previews), so replaying 100,000
 * requests reads and parses only this.
 */
export interface HistoryFacts extends RequestFacts {
  id: string;
  created_at: number;
  status: string;
  decided_by: string | null;
  options: Array<{ id: string; outcome: Outcome }>;
  /** Approving would need `fields` (a form): no rule approves it. */
  needs_fields: boolean;
  /** A deny needs feedback (`input.feedback: required_on_deny`). */
  feedback_required: boolean;
}

export function historyFacts(record: HandupRequest, format: string): HistoryFacts {
  const fields = record.input?.fields;
  return {
    ...requestFacts(record, format),
    id: record.id,
    created_at: record.created_at,
    status: record.status,
    decided_by: record.decision?.decided_by ?? null,
    options: record.options.map((o) => ({ id: o.id, outcome: o.outcome })),
    needs_fields: Array.isArray(fields) && fields.length > 0,
    feedback_required: record.input?.feedback === 'required_on_deny',
  };
}

// Stored as one JSON array in a fixed order, not an object: half the bytes, and parsing 100,000
// of them is half the work. The first element is the layout's version.
const LAYOUT = 1;

export function encodeHistoryFacts(f: HistoryFacts): string {
  return JSON.stringify([
    LAYOUT,
    f.id,
    f.title,
    f.created_at,
    f.status,
    f.decided_by,
    f.format,
    f.kind,
    f.risk,
    f.agent,
    f.session,
    f.integration,
    f.tool,
    f.cwd,
    f.repo,
    // One command as a string (the common case, and what layout 1 always held), several as a list.
    f.commands.length === 0 ? null : f.commands.length === 1 ? f.commands[0] : f.commands,
    f.options.map((o) => [o.id, o.outcome === 'approve' ? 1 : 0]),
    (f.needs_fields ? 1 : 0) | (f.feedback_required ? 2 : 0) | (f.beyondTitle ? 4 : 0) | (f.commandsOnly ? 0 : 8),
  ]);
}

export function decodeHistoryFacts(text: string): HistoryFacts {
  const a = JSON.parse(text) as unknown[];
  if (a[0] !== LAYOUT) throw new Error(`unknown history facts layout ${String(a[0])}`);
  const flags = a[17] as number;
  return {
    id: a[1] as string,
    title: a[2] as string,
    created_at: a[3] as number,
    status: a[4] as string,
    decided_by: a[5] as string | null,
    format: a[6] as string,
    kind: a[7] as string,
    risk: a[8] as string,
    agent: a[9] as string | null,
    session: a[10] as string | null,
    integration: a[11] as string | null,
    tool: a[12] as string | null,
    cwd: a[13] as string | null,
    repo: a[14] as string | null,
    commands: a[15] === null ? [] : typeof a[15] === 'string' ? [a[15]] : (a[15] as string[]),
    options: (a[16] as Array<[string, number]>).map(([id, approve]) => ({ id, outcome: approve ? 'approve' : 'deny' })),
    needs_fields: (flags & 1) === 1,
    feedback_required: (flags & 2) === 2,
    // Rows written before the flag read as a title alone: only a simulation reads them.
    beyondTitle: (flags & 4) === 4,
    // Set when a preview is not a command; rows written before the flag read as commands only.
    commandsOnly: (flags & 8) === 0,
  };
}

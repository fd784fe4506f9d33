import type { HandupRequest } from '../requests/request-schema.js';

/** What rule matchers look at in a request, read once per request. */
export interface RequestFacts {
  agent: string | null;
  session: string | null;
  integration: string | null;
  format: string;
  kind: string;
  risk: string;
  tool: string | null;
  cwd: string | null;
  repo: string | null;
  command: string | null;
  title: string;
}

/**
 * The command preview as one line of text: the first command preview's `shell` string, else its
 * `argv` joined by single spaces; trimmed. Null when the request shows no command.
 */
export function commandPreview(record: Pick<HandupRequest, 'previews'>): string | null {
  for (const p of record.previews ?? []) {
    if (p.type !== 'command' || !p.command) continue;
    const text = typeof p.command.shell === 'string' ? p.command.shell : Array.isArray(p.command.argv) ? p.command.argv.join(' ') : null;
    const trimmed = text?.trim();
    if (trimmed) return trimmed;
  }
  return null;
}

/** The record's `tool`, else `input.tool`, else `input.tool_name` (agents name it either way). */
export function requestTool(record: Pick<HandupRequest, 'tool' | 'input'>): string | null {
  if (typeof record.tool === 'string' && record.tool) return record.tool;
  const input = record.input as Record<string, unknown> | null;
  for (const key of ['tool', 'tool_name']) {
    const v = input?.[key];
    if (typeof v === 'string' && v) return v;
  }
  return null;
}

export function requestFacts(record: HandupRequest, format: string): RequestFacts {
  const s = record.source;
  return {
    agent: s?.agent ?? null,
    session: s?.session ?? null,
    integration: s?.integration ?? null,
    format,
    kind: record.kind,
    risk: record.risk,
    tool: requestTool(record),
    cwd: s?.cwd ?? null,
    repo: s?.repo ?? null,
    command: commandPreview(record),
    title: record.title,
  };
}

import type { HandupRequest } from '../requests/request-schema.js';
import { previewText } from '../requests/preview-text.js';
import { quoteArgv } from '../lib/shell-quote.js';
import { clean } from './terminal-text.js';

export { clean };

/**
 * Human-readable output. Everything shown comes from agents, so every field goes through
 * `clean` (terminal-text.ts), which also keeps single-line fields on one line.
 */
export function formatTime(ms: number | null | undefined): string {
  return ms == null ? '-' : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Left-aligned columns separated by two spaces; the last column is not padded. */
export function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return (
    all
      .map((r) =>
        r
          .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

export function requestRows(records: HandupRequest[]): string {
  if (records.length === 0) return 'no requests\n';
  return table(
    ['ID', 'STATUS', 'KIND', 'RISK', 'CREATED', 'AGENT', 'TITLE'],
    records.map((r) => [clean(r.id), clean(r.status), clean(r.kind), clean(r.risk), formatTime(r.created_at), clean(r.source.agent ?? '-'), clean(r.title)]),
  );
}

/** The full detail of one request, as `show` prints it. */
export function requestDetail(r: HandupRequest): string {
  const lines: string[] = [];
  lines.push(`${clean(r.id)}  ${clean(r.status)}  ${clean(r.kind)}  risk ${clean(r.risk)}`);
  lines.push(clean(r.title));
  if (r.summary) lines.push('', indent(clean(r.summary, { multiline: true })));
  for (const p of r.previews) {
    if (p.type === 'command' && (p.command || p.inline != null)) {
      const c = p.command ?? {};
      // As the inbox shows it, and as rules read it: the shell line, else the argv, else the inline text.
      const cmd = c.shell ?? (c.argv ? quoteArgv(c.argv) : (p.inline ?? ''));
      const title = p.title ?? p.name;
      lines.push('', `command${title ? ` ${clean(title)}` : ''}${c.cwd ? ` (in ${clean(c.cwd)})` : ''}:`, indent(`$ ${clean(cmd, { multiline: true })}`));
      // The agent may run the argv rather than the shell line: when they differ, show both.
      const { argv, shell } = c;
      if (argv?.length && shell != null && argv.join(' ') !== shell.trim()) lines.push(indent(`argv: ${clean(JSON.stringify(argv))}`));
      if (c.env_keys?.length) lines.push(indent(`env: ${clean(c.env_keys.join(', '))}`));
    } else {
      // Everything the preview carries as text (an email's headers and body, a file set's paths),
      // as the decision-link page shows it; what is only in blobs is named.
      const label = [p.type, p.title ?? p.name].filter(Boolean).join(': ');
      const text = previewText(p);
      const blobs = [p.blob, p.before_blob, p.after_blob, ...(p.files ?? []).map((f) => f.blob)].filter((b): b is string => typeof b === 'string');
      lines.push('', `preview ${clean(label)}${text != null ? ':' : ''}${blobs.length ? ` (${blobs.map((b) => clean(b)).join(', ')})` : ''}`);
      if (text != null) lines.push(indent(clean(text, { multiline: true })));
    }
  }
  const questions = r.input?.questions ?? [];
  if (questions.length > 0) {
    lines.push('', 'questions:');
    for (const q of questions) {
      const flags = [q.multi ? 'choose any' : null, q.allow_free_text ? 'free text allowed' : null].filter(Boolean).join(', ');
      lines.push(`  ${clean(q.id)}: ${q.header ? `[${clean(q.header)}] ` : ''}${clean(q.question)}${flags ? `  (${flags})` : ''}`);
      for (const o of q.options ?? []) {
        lines.push(`    - ${clean(o.label)}${o.description ? `: ${clean(o.description)}` : ''}`);
        if (o.preview) lines.push(indent(indent(indent(clean(o.preview, { multiline: true })))));
      }
    }
  }
  if (r.tool) lines.push('', `tool: ${clean(r.tool)}`);
  // The agent's input beyond questions and feedback (a tool's arguments), as the inbox's Input fold shows it.
  const { questions: _q, feedback: _f, ...rest } = r.input ?? {};
  if (Object.keys(rest).length > 0) lines.push('', 'input:', indent(clean(JSON.stringify(rest, null, 2), { multiline: true })));
  lines.push(
    '',
    `options: ${r.options.map((o) => `${clean(o.id)} (${clean(o.outcome)}${o.label.toLowerCase() !== o.id ? `, "${clean(o.label)}"` : ''})`).join(', ')}`,
  );
  const source = Object.entries(r.source)
    .filter(([, v]) => v != null)
    .map(([k, v]) => `${clean(k)} ${clean(String(v))}`);
  if (source.length > 0) lines.push(`source: ${source.join(', ')}`);
  lines.push(
    `created ${formatTime(r.created_at)}${r.expires_at != null ? `, expires ${formatTime(r.expires_at)} (on timeout: ${clean(r.on_timeout)})` : ', no timeout'}`,
  );
  if (r.input?.feedback === 'required_on_deny') lines.push('a deny needs feedback (-m)');
  lines.push(`content_hash ${clean(r.content_hash)}`);
  if (r.status !== 'pending') lines.push('', outcome(r).trimEnd());
  return lines.join('\n') + '\n';
}

/** What became of a request: one line, then feedback and answers when there are any. */
export function outcome(r: HandupRequest): string {
  const d = r.decision;
  const lines: string[] = [];
  if (!d) {
    lines.push(`${clean(r.id)} ${clean(r.status)}${r.status === 'expired' ? ' (no decision: on_timeout expire)' : ''}`);
  } else {
    const by = d.decided_by === 'timeout' ? `on timeout (${clean(r.on_timeout)})` : `by ${clean(d.decided_by ?? 'unknown')}`;
    lines.push(
      `${clean(r.id)} ${clean(r.status)}: option ${clean(d.option)} ${by} at ${formatTime(d.decided_at)}${d.scope ? `, scope ${clean(d.scope)}` : ''}`,
    );
    if (d.feedback) lines.push(`feedback: ${clean(d.feedback, { multiline: true })}`);
    for (const [qid, a] of Object.entries(d.fields?.answers ?? {})) {
      const parts = [...a.selected.map((s) => clean(s)), ...(a.text ? [`"${clean(a.text)}"`] : [])];
      lines.push(`answer ${clean(qid)}: ${parts.join(', ')}`);
    }
  }
  return lines.join('\n') + '\n';
}

/** `--json` of `wait` and `ask --wait`: the decision plus id and status (handup's CLI shape). */
export function waitJson(r: HandupRequest): Record<string, unknown> {
  return r.decision ? { id: r.id, status: r.status, ...r.decision } : { id: r.id, status: r.status, content_hash: r.content_hash };
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

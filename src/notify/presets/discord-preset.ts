import type { NoticeText } from '../notice-text.js';

const RISK_COLOUR = { low: 0x2e7d32, medium: 0xf9a825, high: 0xc62828 } as const;
/** Discord markdown, escaped so request text cannot restyle the message or fake a link. */
const esc = (s: string) => s.replace(/[\\*_~`|>[\]]/g, (c) => `\\${c}`);
const cut = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/**
 * A Discord execute-webhook body: `content` (the line), one embed (title linked to the inbox,
 * agent and risk fields (embed titles and field values render markdown too, masked links included), the summary line and decision links as markdown links) and
 * `allowed_mentions: {parse: []}` so no text in a request can mention @everyone or a role.
 */
export function renderDiscord(n: NoticeText): unknown {
  const lines: string[] = [];
  if (n.summary) lines.push(esc(n.summary));
  if (n.feedback) lines.push(`> ${esc(n.feedback.split(/\r?\n/)[0]!)}`);
  if (n.links.length) lines.push(n.links.map((l) => `[${esc(l.label)}](${l.url})`).join('  ·  '));
  lines.push(`[Open in countersign](${n.url})`);
  const embed: Record<string, unknown> = {
    title: cut(esc(n.title), 256),
    url: n.url,
    description: cut(lines.join('\n\n'), 4096),
    color: RISK_COLOUR[n.risk],
    fields: [
      { name: 'Agent', value: cut(esc(n.agent), 1024), inline: true },
      { name: 'Risk', value: n.risk, inline: true },
      { name: 'Kind', value: n.kind, inline: true },
    ],
  };
  return { content: cut(esc(n.line), 2000), embeds: [embed], allowed_mentions: { parse: [] } };
}

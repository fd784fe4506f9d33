import { cutText } from '../../lib/cut-text.js';
import type { NoticeText } from '../notice-text.js';

const RISK_COLOUR = { low: 0x2e7d32, medium: 0xf9a825, high: 0xc62828 } as const;
/**
 * Discord markdown, escaped so request text cannot restyle the message or fake a link: the
 * inline marks anywhere, and a heading, subtext or list marker where a line starts.
 */
const escText = (s: string) => s.replace(/[\\*_~`|>[\]]/g, (c) => `\\${c}`);
/**
 * A bare URL is left as written: Discord links it as a whole, and an escape inside it would
 * change the address (`my\_repo`). It ends before any character a masked link or a quote needs.
 */
const BARE_URL = /https?:\/\/[^\s<>[\]()`|\\]+/g;
const esc = (s: string) => {
  let out = '';
  let from = 0;
  for (const m of s.matchAll(BARE_URL)) {
    out += escText(s.slice(from, m.index)) + m[0];
    from = m.index + m[0].length;
  }
  return (out + escText(s.slice(from))).replace(/^(\s*)(#|-|\+|\d+\.)/gm, '$1\\$2');
};
/** An option's label as a link's text: short enough that every link, and the inbox link, fit the embed. */
const LINK_LABEL_CHARS = 80;
/** Cut after escaping (the limits count what is sent), never leaving an escape's backslash alone before the "…". */
const cut = (s: string, max: number) => {
  const out = cutText(s, max);
  return out === s ? s : out.replace(/(?<!\\)((?:\\\\)*)\\…$/, '$1…');
};

/**
 * A Discord execute-webhook body: `content` (the line), one embed (title linked to the inbox,
 * agent and risk fields (embed titles and field values render markdown too, masked links included), the summary line and decision links as markdown links) and
 * `allowed_mentions: {parse: []}` so no text in a request can mention @everyone or a role.
 */
export function renderDiscord(n: NoticeText): unknown {
  const text: string[] = [];
  if (n.summary) text.push(esc(n.summary));
  if (n.feedback) text.push(`> ${esc(n.feedback.split(/\r?\n/)[0]!)}`);
  // The links are never cut: what is shortened to fit the embed is the text before them.
  const decisionLinks = n.links.map((l) => `[${esc(cut(l.label, LINK_LABEL_CHARS))}](${l.url})`).join('  ·  ');
  const linkLines = [decisionLinks, `[Open in countersign](${n.url})`].filter(Boolean).join('\n\n');
  const room = 4096 - linkLines.length - 2;
  const description = text.length ? `${cut(text.join('\n\n'), room)}\n\n${linkLines}` : linkLines;
  const embed: Record<string, unknown> = {
    title: cut(esc(n.title), 256),
    url: n.url,
    description,
    color: RISK_COLOUR[n.risk],
    fields: [
      { name: 'Agent', value: cut(esc(n.agent), 1024), inline: true },
      { name: 'Risk', value: n.risk, inline: true },
      { name: 'Kind', value: n.kind, inline: true },
    ],
  };
  return { content: cut(esc(n.line), 2000), embeds: [embed], allowed_mentions: { parse: [] } };
}

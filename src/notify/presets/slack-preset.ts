import type { NoticeText } from '../notice-text.js';

/** Slack's mrkdwn control characters; escaping them keeps `<!channel>` in a title from pinging anyone. */
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const plain = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/**
 * A Slack incoming-webhook message: `text` (the notification and fallback line) plus Block Kit
 * `blocks`: the headline and linked title, agent and risk, the summary line when included, and
 * link buttons (the inbox, and with decision links one per option).
 */
export function renderSlack(n: NoticeText): unknown {
  const blocks: unknown[] = [
    { type: 'section', text: { type: 'mrkdwn', text: `*${esc(n.headline)}*\n<${n.url}|${esc(n.title)}>` } },
    { type: 'context', elements: [{ type: 'mrkdwn', text: `Agent: *${esc(n.agent)}*  ·  Risk: *${n.risk}*  ·  ${n.kind}` }] },
  ];
  if (n.summary) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: esc(n.summary) } });
  if (n.feedback) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `> ${esc(n.feedback.split(/\r?\n/)[0]!)}` } });
  const buttons: unknown[] = n.links.map((l, i) => ({
    type: 'button',
    action_id: `countersign-link-${i}`,
    text: { type: 'plain_text', text: plain(l.label, 75) },
    url: l.url,
    ...(l.outcome === 'approve' ? { style: 'primary' } : { style: 'danger' }),
  }));
  buttons.push({ type: 'button', action_id: 'countersign-open', text: { type: 'plain_text', text: 'Open in countersign' }, url: n.url });
  blocks.push({ type: 'actions', elements: buttons });
  // `text` is mrkdwn too (it is the notification line): escaped like the blocks.
  return { text: `${esc(n.line)} (${esc(n.agent)}, ${n.risk} risk) ${n.url}`, blocks };
}

import { cutText } from '../../lib/cut-text.js';
import type { NoticeText } from '../notice-text.js';

/**
 * Slack's control characters. Slack decodes these three entities in every text object, so the
 * escape is safe in plain_text too, and it keeps `<!channel>` from pinging anyone.
 */
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/** Cut after escaping (the limits count what is sent), never inside an entity. */
const cut = (s: string, max: number) => {
  const out = cutText(s, max);
  return out === s ? s : out.replace(/&[a-z]{0,3}…$/, '…');
};
/**
 * Text the agent or a reviewer wrote goes only into plain_text objects: mrkdwn has no escape for
 * `*bold*` or `_italic_`, so a title could otherwise restyle the message. Block Kit limits:
 * 150 characters for a header, 3,000 for other text.
 */
const plain = (s: string, max = 3000) => ({ type: 'plain_text', text: cut(esc(s), max), emoji: false });

/**
 * A Slack incoming-webhook message: `text` (the notification and fallback line) plus Block Kit
 * `blocks`: the headline, the title, agent and risk, the summary line when included, and link
 * buttons (the inbox, and with decision links one per option).
 */
export function renderSlack(n: NoticeText): unknown {
  const blocks: unknown[] = [
    { type: 'header', text: plain(n.headline, 150) },
    { type: 'section', text: plain(n.title) },
    { type: 'context', elements: [plain(`Agent: ${n.agent}  ·  Risk: ${n.risk}  ·  ${n.kind}`)] },
  ];
  if (n.summary) blocks.push({ type: 'section', text: plain(n.summary) });
  if (n.feedback) blocks.push({ type: 'section', text: plain(`Feedback: ${n.feedback.split(/\r?\n/)[0]!}`) });
  const buttons: unknown[] = n.links.map((l, i) => ({
    type: 'button',
    action_id: `countersign-link-${i}`,
    text: plain(l.label, 75),
    url: l.url,
    ...(l.outcome === 'approve' ? { style: 'primary' } : { style: 'danger' }),
  }));
  buttons.push({ type: 'button', action_id: 'countersign-open', text: plain('Open in countersign', 75), url: n.url });
  blocks.push({ type: 'actions', elements: buttons });
  // `mrkdwn: false` keeps the notification line's text as written; URLs are still linked.
  return { text: `${esc(n.line)} (${esc(n.agent)}, ${n.risk} risk) ${n.url}`, mrkdwn: false, blocks };
}

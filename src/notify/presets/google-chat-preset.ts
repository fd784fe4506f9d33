import type { NoticeText } from '../notice-text.js';

/** Google Chat card text takes a little HTML; request text is escaped so it stays text. */
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/**
 * The message `text` uses Chat's own syntax, which has no escape: `<users/all>` mentions
 * everyone and `<url|text>` (or, in Markdown mode, `[text](url)`) makes a link. A zero-width
 * space after each `<` and `[` keeps request text from forming either, and reads the same.
 */
const chatText = (s: string) => s.replace(/[<[]/g, (c) => `${c}\u200b`);

/**
 * A Google Chat incoming-webhook message: `text` (the line) and one `cardsV2` card: header
 * (headline, title), agent and risk, the summary line, and a button list of openLink buttons
 * (the inbox, and each decision link).
 */
export function renderGoogleChat(n: NoticeText, eventId: string): unknown {
  const widgets: unknown[] = [{ decoratedText: { topLabel: 'Agent', text: esc(n.agent) } }, { decoratedText: { topLabel: 'Risk', text: n.risk } }];
  if (n.summary) widgets.push({ textParagraph: { text: esc(n.summary) } });
  if (n.feedback) widgets.push({ textParagraph: { text: `Feedback: ${esc(n.feedback.split(/\r?\n/)[0]!)}` } });
  const buttons = [
    ...n.links.map((l) => ({ text: l.label, onClick: { openLink: { url: l.url } } })),
    { text: 'Open in countersign', onClick: { openLink: { url: n.url } } },
  ];
  widgets.push({ buttonList: { buttons } });
  return {
    text: chatText(n.line),
    cardsV2: [{ cardId: `countersign-${eventId}`, card: { header: { title: n.headline, subtitle: n.title }, sections: [{ widgets }] } }],
  };
}

import type { NoticeText } from '../notice-text.js';

/**
 * Teams renders TextBlock and FactSet text as markdown, so a title like `[Approve](https://…)`
 * would become a link; TextRun text is never markdown. Every line that carries request text is
 * therefore a RichTextBlock of TextRuns.
 */
const rich = (runs: Array<{ text: string; weight?: 'Bolder'; size?: 'Medium'; isSubtle?: boolean }>) => ({
  type: 'RichTextBlock',
  inlines: runs.map((r) => ({ type: 'TextRun', ...r })),
});

/**
 * A Microsoft Teams Workflows webhook message ("When a Teams webhook request is received"): a
 * `message` with one Adaptive Card attachment (version 1.4): headline, title, agent, risk and
 * kind, the summary line, and Action.OpenUrl buttons for the inbox and each decision link.
 */
export function renderTeams(n: NoticeText): unknown {
  const body: unknown[] = [
    rich([{ text: n.headline, weight: 'Bolder', size: 'Medium' }]),
    rich([{ text: n.title }]),
    rich([
      { text: 'Agent: ', weight: 'Bolder' },
      { text: n.agent },
      { text: ' · Risk: ', weight: 'Bolder' },
      { text: n.risk },
      { text: ' · Kind: ', weight: 'Bolder' },
      { text: n.kind },
    ]),
  ];
  if (n.summary) body.push(rich([{ text: n.summary, isSubtle: true }]));
  if (n.feedback) body.push(rich([{ text: 'Feedback: ', weight: 'Bolder' }, { text: n.feedback.split(/\r?\n/)[0]! }]));
  const actions = [
    ...n.links.map((l) => ({
      type: 'Action.OpenUrl',
      title: l.label,
      url: l.url,
      ...(l.outcome === 'approve' ? { style: 'positive' } : { style: 'destructive' }),
    })),
    { type: 'Action.OpenUrl', title: 'Open in countersign', url: n.url },
  ];
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: { $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4', body, actions },
      },
    ],
  };
}

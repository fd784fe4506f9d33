import type { NoticeText } from '../notice-text.js';

/**
 * A Microsoft Teams Workflows webhook message ("When a Teams webhook request is received"): a
 * `message` with one Adaptive Card attachment (version 1.4): headline, title, agent and risk,
 * the summary line, and Action.OpenUrl buttons for the inbox and each decision link.
 */
export function renderTeams(n: NoticeText): unknown {
  const body: unknown[] = [
    { type: 'TextBlock', text: n.headline, weight: 'Bolder', size: 'Medium', wrap: true },
    { type: 'TextBlock', text: n.title, wrap: true },
    { type: 'FactSet', facts: [{ title: 'Agent', value: n.agent }, { title: 'Risk', value: n.risk }, { title: 'Kind', value: n.kind }] },
  ];
  if (n.summary) body.push({ type: 'TextBlock', text: n.summary, wrap: true, isSubtle: true });
  if (n.feedback) body.push({ type: 'TextBlock', text: `Feedback: ${n.feedback.split(/\r?\n/)[0]}`, wrap: true, isSubtle: true });
  const actions = [
    ...n.links.map((l) => ({ type: 'Action.OpenUrl', title: l.label, url: l.url, ...(l.outcome === 'approve' ? { style: 'positive' } : { style: 'destructive' }) })),
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

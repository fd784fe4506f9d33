import type { NoticeText } from '../notice-text.js';

/** ntfy priorities 1..5: the request's risk while it waits; what already happened is low. */
const RISK_PRIORITY = { low: 2, medium: 3, high: 4 } as const;
const WAITING = new Set(['request.created', 'request.reminder', 'request.expiring', 'countersign.test']);
// An ntfy notification carries at most three action buttons.
const MAX_ACTIONS = 3;

/**
 * An `http` action decides at one tap, with no page to read first, and its label is the agent's
 * text: unless the label starts with what the option does, that goes first ("Approve: Deny").
 * Every option of a notice (kind info) dismisses it, so its labels are shown as they are.
 */
const SAYS = { approve: /^\s*approve\b/i, deny: /^\s*deny\b/i } as const;
function actionLabel(l: NoticeText['links'][number], kind: NoticeText['kind']): string {
  if (kind === 'info' || SAYS[l.outcome].test(l.label)) return l.label;
  return `${l.outcome === 'approve' ? 'Approve' : 'Deny'}: ${l.label}`;
}

/** The topic is the last path segment of the hook's URL (`https://ntfy.sh/<topic>`). */
export function ntfyTopic(webhook: string): string {
  return decodeURIComponent(new URL(webhook).pathname.replace(/\/+$/, '').split('/').pop() ?? '');
}

/** JSON publishing goes to the server's root, with the topic in the body. */
export function ntfyPublishUrl(webhook: string): string {
  const url = new URL(webhook);
  const path = url.pathname.replace(/\/+$/, '').split('/');
  path.pop();
  url.pathname = `${path.join('/')}/`;
  return url.toString();
}

/**
 * An ntfy JSON publish: `topic`, `title`, `message`, `priority` from the risk (one higher when
 * the request is about to expire), `tags`, `click` (the inbox) and `actions`: a `view` of the
 * inbox and, with decision links, `http` actions that POST the link (at most three in all).
 */
export function renderNtfy(n: NoticeText, webhook: string): unknown {
  // A burst summary is about its latest request: urgent while that one still waits.
  const waiting = WAITING.has(n.type) || (n.type === 'notifications.summary' && n.status === 'pending');
  let priority: number = waiting ? RISK_PRIORITY[n.risk] : 2;
  if (n.type === 'request.expiring') priority = Math.min(5, priority + 1);
  const lines = [n.title, `${n.agent} · ${n.risk} risk`];
  if (n.summary) lines.push(n.summary);
  if (n.feedback) lines.push(`Feedback: ${n.feedback.split(/\r?\n/)[0]}`);
  const actions: unknown[] = [{ action: 'view', label: 'Open', url: n.url, clear: true }];
  for (const l of n.links.slice(0, MAX_ACTIONS - 1)) {
    // A deny that needs feedback cannot be sent at one tap: its button opens the link's page.
    if (l.outcome === 'deny' && n.feedbackRequired) {
      actions.push({ action: 'view', label: actionLabel(l, n.kind), url: l.url, clear: true });
      continue;
    }
    actions.push({
      action: 'http',
      label: actionLabel(l, n.kind),
      url: l.url,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'via=ntfy',
      clear: true,
    });
  }
  return {
    topic: ntfyTopic(webhook),
    title: n.headline,
    message: lines.join('\n'),
    priority,
    tags: [n.risk === 'high' && waiting ? 'warning' : 'countersign'],
    click: n.url,
    actions,
  };
}

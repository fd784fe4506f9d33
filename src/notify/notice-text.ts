import type { Envelope, EnvelopeRequest } from './notify-envelope.js';
import { visibleText } from '../lib/visible-text.js';
import { cutText } from '../lib/cut-text.js';

/**
 * What every preset shows, worked out once from an envelope: a headline, the title, agent and
 * risk, a one-line summary (only when the hook includes content), the inbox link and the
 * decision links. Presets only lay this out in each service's shape.
 */
export interface NoticeText {
  type: string;
  headline: string;
  /** `headline: title`, the plain-text line for notification previews. */
  line: string;
  title: string;
  agent: string;
  risk: EnvelopeRequest['risk'];
  kind: EnvelopeRequest['kind'];
  status: EnvelopeRequest['status'];
  /** The first line of the request's summary (include_content only), shortened. */
  summary: string | null;
  url: string;
  links: NonNullable<Envelope['data']['links']>;
  /**
   * For decisions: the first line of the feedback given, if any, shortened like the summary
   * (feedback may be 64 KiB, past what a chat message takes: Slack's section text, Teams' 28 KB
   * message, Google Chat's 32,000 bytes, ntfy's 4 KiB).
   */
  feedback: string | null;
  /** A deny needs feedback (`input.feedback: required_on_deny`): its link must open the page to write it. */
  feedbackRequired: boolean;
}

const STATUS_WORD: Record<string, string> = {
  approved: 'Approved',
  denied: 'Denied',
  answered: 'Answered',
  dismissed: 'Dismissed',
  expired: 'Expired',
  cancelled: 'Cancelled',
};

/** "45s", "5m", "1h 30m", "2d 3h": enough to judge urgency. */
export function durationText(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d ${h % 24}h` : `${d}d`;
}

/**
 * Agent text as one line a person reads as it is: line breaks as spaces (a title on two lines
 * would make its second a heading, or a fake "Approved" line, in a chat message), bidi controls
 * and invisible characters shown as U+FFFD, as the inbox shows them.
 */
function oneLine(text: string): string {
  return visibleText(text.replace(/[^\S ]*[\r\n\u0085\u2028\u2029]+[^\S ]*/g, ' '));
}

function firstLine(text: string | null | undefined, max = 280): string | null {
  const line = text
    ?.split(/\r?\n|[\r\u0085\u2028\u2029]/)
    .find((l) => l.trim())
    ?.trim();
  if (!line) return null;
  return visibleText(cutText(line, max));
}

/**
 * The agent as notifications name it: `unknown` when the request names none or a blank one (an
 * empty agent would leave a gap in every preset, and Discord refuses an embed field left empty).
 */
function agentName(agent: string | null | undefined): string {
  return agent?.trim() ? oneLine(agent) : 'unknown';
}

/** `expiresAt` and `now` are for the expiring headline ("Expires in 5m"). */
export function noticeText(env: Envelope, o: { expiresAt?: number | null; now: number; feedbackRequired?: boolean }): NoticeText {
  const summaryEvent = env.type === 'notifications.summary';
  const r = (summaryEvent ? env.data.latest : env.data.request)!;
  const agent = agentName(r.source.agent);
  let headline: string;
  switch (env.type) {
    case 'request.created':
      headline = r.kind === 'question' ? 'Question' : r.kind === 'info' ? 'Notice' : 'Approval needed';
      break;
    case 'request.reminder':
      headline = 'Still waiting';
      break;
    case 'request.expiring':
      headline = o.expiresAt ? `Expires in ${durationText(Math.max(0, o.expiresAt - o.now))}` : 'Expiring soon';
      break;
    case 'request.decided': {
      const by = env.data.decision?.decided_by;
      headline = `${STATUS_WORD[r.status] ?? r.status}${by ? ` by ${by}` : ''}`;
      break;
    }
    case 'notifications.summary':
      headline = `${env.data.count} more from ${agentName(env.data.source?.agent ?? agent)}`;
      break;
    case 'countersign.test':
      headline = 'Test notification';
      break;
    default:
      headline = STATUS_WORD[r.status] ?? env.type;
  }
  return {
    type: env.type,
    headline,
    line: `${headline}: ${oneLine(r.title)}`,
    title: oneLine(r.title),
    agent,
    risk: r.risk,
    kind: r.kind,
    status: r.status,
    summary: firstLine(r.summary),
    url: r.url,
    links: (env.data.links ?? []).map((l) => ({ ...l, label: oneLine(l.label) })),
    feedback: firstLine(env.data.decision?.feedback),
    feedbackRequired: o.feedbackRequired ?? false,
  };
}

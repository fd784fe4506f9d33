import type { HandupRequest, Preview, Source } from '../requests/request-schema.js';
import type { StoredRequest } from '../storage/request-records.js';

/** A request as events describe it: never a token or a secret. */
export interface EnvelopeRequest {
  id: string;
  title: string;
  risk: HandupRequest['risk'];
  kind: HandupRequest['kind'];
  status: HandupRequest['status'];
  source: Source;
  format: string;
  /** The request in the inbox: `<public_url>/#/requests/<id>`. */
  url: string;
  /** Only with `include_content: true`. */
  summary?: string | null;
  previews?: Preview[];
}

/** One decision link, with `decision_links: true` on the hook. */
export interface DecisionLink {
  option: string;
  label: string;
  outcome: 'approve' | 'deny';
  url: string;
}

export interface Envelope {
  v: 1;
  type: string;
  /** The event id: this delivery's id (also sent as `webhook-id`). */
  id: string;
  time: string;
  data: {
    request?: EnvelopeRequest;
    decision?: HandupRequest['decision'];
    links?: DecisionLink[];
    /** Summaries: the source whose notifications were held back, how many, and the newest. */
    source?: { agent: string; session: string | null };
    count?: number;
    latest?: EnvelopeRequest;
  };
}

/** The inbox link of a request. */
export function inboxLink(baseUrl: string, id: string): string {
  return `${baseUrl}/#/requests/${encodeURIComponent(id)}`;
}

export function envelopeRequest(stored: StoredRequest, baseUrl: string, includeContent: boolean): EnvelopeRequest {
  const r = stored.record;
  const out: EnvelopeRequest = {
    id: r.id,
    title: r.title,
    risk: r.risk,
    kind: r.kind,
    status: r.status,
    source: r.source,
    format: stored.format,
    url: inboxLink(baseUrl, r.id),
  };
  if (includeContent) {
    out.summary = r.summary;
    out.previews = r.previews;
  }
  return out;
}

export function requestEnvelope(o: {
  type: string;
  id: string;
  at: number;
  stored: StoredRequest;
  baseUrl: string;
  includeContent: boolean;
  links?: DecisionLink[] | undefined;
}): Envelope {
  const data: Envelope['data'] = { request: envelopeRequest(o.stored, o.baseUrl, o.includeContent) };
  if (o.stored.record.decision) data.decision = o.stored.record.decision;
  if (o.links) data.links = o.links;
  return { v: 1, type: o.type, id: o.id, time: new Date(o.at).toISOString(), data };
}

export function summaryEnvelope(o: {
  id: string;
  at: number;
  agent: string;
  session: string | null;
  count: number;
  latest: StoredRequest;
  baseUrl: string;
  includeContent: boolean;
}): Envelope {
  return {
    v: 1,
    type: 'notifications.summary',
    id: o.id,
    time: new Date(o.at).toISOString(),
    data: { source: { agent: o.agent, session: o.session }, count: o.count, latest: envelopeRequest(o.latest, o.baseUrl, o.includeContent) },
  };
}

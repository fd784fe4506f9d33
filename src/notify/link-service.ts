import type { Clock } from '../lib/clock.js';
import type { Config } from '../config.js';
import { AppError } from '../lib/errors.js';
import type { Option } from '../requests/request-schema.js';
import type { RequestService } from '../requests/request-service.js';
import type { StoredRequest } from '../storage/request-records.js';
import type { Store } from '../storage/store.js';
import { verifyLink, type LinkClaims } from './decision-links.js';
import { issuesLinks } from './hook-config.js';
import { LINK_KEY } from './notifier.js';

/** What a decision link leads to, for the page. */
export type LinkOutcome =
  | { state: 'open'; status: 200; claims: LinkClaims; stored: StoredRequest; option: Option }
  | { state: 'decided'; status: 200; claims: LinkClaims; stored: StoredRequest; option: Option }
  | { state: 'used' | 'not_pending'; status: 409; claims: LinkClaims; stored: StoredRequest; option: Option }
  | { state: 'expired'; status: 410 }
  | { state: 'changed'; status: 412 }
  | { state: 'unknown'; status: 404 }
  | { state: 'invalid'; status: 400; claims: LinkClaims; stored: StoredRequest; option: Option; message: string }
  | { state: 'rate_limited'; status: 429 };

/**
 * Decision links: a GET only looks (chat services and mail scanners fetch links to preview
 * them), a POST decides through the request service's normal path with
 * `decided_by: "link:<hook>"`. Any daemon verifies any link: the key is in the store.
 */
export function createLinkService({ store, requests, clock, config }: { store: Store; requests: RequestService; clock: Clock; config: Readonly<Config> }) {
  const perMinute = config.notifications.links_per_minute;
  // Turning links off (globally, on a hook, or removing the hook) also stops the links already
  // sent: the operator's switch would mean little while week-old links still decided.
  const linkHooks = new Set(config.hooks.filter((h) => issuesLinks(config, h)).map((h) => h.name));

  async function look(token: string, ip: string): Promise<LinkOutcome> {
    const now = clock.now();
    if (!(await store.rates.take(`link:${ip}`, perMinute, 60_000, now))) return { state: 'rate_limited', status: 429 };
    const key = await store.keys.get(LINK_KEY);
    const claims = key ? verifyLink(Buffer.from(key, 'base64url'), token) : null;
    if (!claims || !linkHooks.has(claims.hook)) return { state: 'unknown', status: 404 };
    if (now >= claims.expiresAt) return { state: 'expired', status: 410 };
    const stored = await store.requests.get(claims.requestId);
    const option = stored?.record.options.find((o) => o.id === claims.option);
    if (!stored || !option) return { state: 'unknown', status: 404 };
    if (stored.record.content_hash !== claims.contentHash) return { state: 'changed', status: 412 };
    if (stored.record.status !== 'pending') return ended(claims, stored, option);
    return { state: 'open', status: 200, claims, stored, option };
  }

  /** A link whose request has ended: "used" when this link (its hook and option) is what decided it. */
  function ended(claims: LinkClaims, stored: StoredRequest, option: Option): LinkOutcome {
    const d = stored.record.decision;
    const used = d?.decided_by === `link:${claims.hook}` && d.option === claims.option;
    return { state: used ? 'used' : 'not_pending', status: 409, claims, stored, option };
  }

  return {
    /** GET: what the link would do. Never decides anything. */
    inspect: look,

    /** POST: decides with the link's option; `feedback` only on a deny. */
    async use(token: string, ip: string, feedback: string | undefined): Promise<LinkOutcome> {
      const seen = await look(token, ip);
      if (seen.state !== 'open') return seen;
      const { claims, option } = seen;
      const body = {
        option: claims.option,
        content_hash: claims.contentHash,
        ...(option.outcome === 'deny' && feedback?.trim() ? { feedback } : {}),
      };
      try {
        const stored = await requests.decideAs(claims.requestId, body, `link:${claims.hook}`, { link: { hook: claims.hook } });
        return { state: 'decided', status: 200, claims, stored, option };
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        const now = await store.requests.get(claims.requestId);
        if (err.code === 'not_pending' && now) return ended(claims, now, option);
        if (err.code === 'content_hash_mismatch') return { state: 'changed', status: 412 };
        if (err.code === 'invalid_decision') return { ...seen, state: 'invalid', status: 400, message: err.message };
        throw err;
      }
    },
  };
}

export type LinkService = ReturnType<typeof createLinkService>;

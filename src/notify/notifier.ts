import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { durationMs } from '../lib/durations.js';
import { newId } from '../lib/ids.js';
import { localUrl } from '../lib/local-url.js';
import { requestFacts } from '../policy/request-facts.js';
import { compileMatch, type FactsTest } from '../policy/rule-matcher.js';
import type { HandupRequest } from '../requests/request-schema.js';
import type { TerminalTransition } from '../requests/request-hooks.js';
import type { BurstWindow } from '../storage/notify-bursts.js';
import type { StoredRequest } from '../storage/request-records.js';
import type { WriteTx } from '../storage/store.js';
import { signLink } from './decision-links.js';
import { HOOK_EVENTS, issuesLinks, type HookConfig, type HookEvent } from './hook-config.js';
import { describeHookTarget, renderHookBody } from './hook-render.js';
import { mutedBy } from './mute-match.js';
import { noticeText } from './notice-text.js';
import type { NotifyEvents } from './notify-events.js';
import { requestEnvelope, summaryEnvelope, type DecisionLink, type Envelope } from './notify-envelope.js';

/** The store key the decision-link HMAC key is kept under (shared by every daemon). */
export const LINK_KEY = 'decision-links';
const LINK_TTL_MS = 7 * 86_400_000;
// The first four options get links; more would not fit a chat message's buttons.
const MAX_LINKS = 4;
const SWEEP_BATCH = 200;

interface CompiledHook {
  config: HookConfig;
  events: ReadonlySet<string>;
  matches: FactsTest;
}

export interface NotifierDeps {
  config: Readonly<Config>;
  events: NotifyEvents;
  log: Logger;
}

/** Where a request's source is counted for bursts: `source.agent` (or `unknown`) and `source.session` ('' for none). */
function sourceOf(stored: StoredRequest): { agent: string; session: string } {
  return { agent: stored.record.source.agent ?? 'unknown', session: stored.record.source.session ?? '' };
}

/**
 * The notification outbox writer. Every event a hook hears of is decided and
 * written here, inside the transaction that caused it: request creation (only for requests
 * still pending), each terminal transition, and the scheduler's reminders, expiring notices
 * and burst summaries. It checks mutes and burst windows (both in the store, so several daemons
 * share them), renders the hook's body (with decision links when asked) and inserts one outbox
 * row per hook; the delivery worker does the sending.
 */
export function createNotifier({ config, events, log }: NotifierDeps) {
  const hooks: CompiledHook[] = config.hooks.map((h) => ({
    config: h,
    events: new Set<string>(h.events ?? HOOK_EVENTS),
    // The policy's matchers: a hook without `match` hears of every request.
    matches: compileMatch(h.match ?? {}),
  }));
  const byName = new Map(hooks.map((h) => [h.config.name, h]));
  const remindMs = config.notifications.remind_every === 'none' ? null : durationMs(config.notifications.remind_every);
  const expiringMs = config.notifications.expiring_before === 'none' ? null : durationMs(config.notifications.expiring_before);
  const burstMax = config.notifications.burst.max;
  const burstMs = durationMs(config.notifications.burst.window);
  const wantsReminders = remindMs !== null && hooks.some((h) => h.events.has('request.reminder'));
  const wantsExpiring = expiringMs !== null && hooks.some((h) => h.events.has('request.expiring'));
  // The configured port until the daemon listens (notices due at start go out before it does).
  let localBase = localUrl(config.host, config.port);

  const baseUrl = () => config.public_url ?? localBase;

  /** Tells this daemon's workers (after commit) and the other daemons that something was queued. */
  function queued(tx: WriteTx) {
    tx.announce({ type: 'deliveries.queued' });
    tx.afterCommit(() => events.emit({ type: 'deliveries.queued' }));
  }

  async function linkKey(tx: WriteTx, at: number): Promise<Buffer> {
    const stored = (await tx.keys.get(LINK_KEY)) ?? (await tx.keys.ensure(LINK_KEY, randomBytes(32).toString('base64url'), at));
    return Buffer.from(stored, 'base64url');
  }

  const wantsLinks = (hook: CompiledHook, stored: StoredRequest) =>
    issuesLinks(config, hook.config) && stored.record.status === 'pending' && stored.record.kind !== 'question';

  async function linksFor(tx: WriteTx, hook: CompiledHook, stored: StoredRequest, at: number): Promise<DecisionLink[] | undefined> {
    return wantsLinks(hook, stored) ? makeLinks(await linkKey(tx, at), hook, stored, at) : undefined;
  }

  /** One signed link per option (the first four), valid until the request's deadline, else seven days. */
  function makeLinks(key: Buffer, hook: CompiledHook, stored: StoredRequest, at: number): DecisionLink[] {
    const r = stored.record;
    const expiresAt = r.expires_at ?? at + LINK_TTL_MS;
    return r.options.slice(0, MAX_LINKS).map((o) => ({
      option: o.id,
      label: o.label,
      outcome: o.outcome,
      url: `${config.public_url}/d/${signLink(key, { requestId: r.id, option: o.id, contentHash: r.content_hash, hook: hook.config.name, expiresAt })}`,
    }));
  }

  async function insert(tx: WriteTx, hook: CompiledHook, env: Envelope, stored: StoredRequest, at: number, expiresAt: number | null) {
    const requestId = stored.record.id;
    const feedbackRequired = stored.record.input?.feedback === 'required_on_deny';
    let body: string;
    try {
      body = renderHookBody(hook.config, env, noticeText(env, { expiresAt, now: at, feedbackRequired }));
    } catch (err) {
      // A template that fails on this event's data must not undo the decision that caused it.
      log.warn({ hook: hook.config.name, err: (err as Error).message, type: env.type }, 'could not render a notification; not sent');
      return false;
    }
    await tx.deliveries.insert({ id: env.id, requestId, type: env.type, hook: hook.config.name, url: describeHookTarget(hook.config), body, createdAt: at });
    return true;
  }

  /** The summary of a window that held notifications back, if its hook still exists. */
  async function summarize(tx: WriteTx, w: BurstWindow, at: number): Promise<boolean> {
    const hook = byName.get(w.hook);
    const latest = w.latestRequestId ? await tx.requests.get(w.latestRequestId) : undefined;
    if (!hook || !latest) return false;
    // Muted since the window opened: the held notifications stay unsent, summary included.
    if (mutedBy(await tx.mutes.active(at), latest.record.source)) return false;
    const env = summaryEnvelope({
      id: newId(at),
      at,
      agent: w.agent,
      session: w.session || null,
      count: w.held,
      latest,
      baseUrl: baseUrl(),
      includeContent: hook.config.include_content ?? false,
    });
    return insert(tx, hook, env, latest, at, null);
  }

  /**
   * Counts one notification against its source's window on this hook: true to send it now,
   * false when it is held back for the window's summary. A window that ended with notifications
   * held has its summary written first (if the scheduler has not sent it yet).
   */
  async function burstAllows(tx: WriteTx, hook: CompiledHook, stored: StoredRequest, at: number): Promise<boolean> {
    if (burstMax === 0) return true;
    const { agent, session } = sourceOf(stored);
    const w = await tx.bursts.lock(hook.config.name, agent, session);
    if (w.windowEnd <= at) {
      if (w.held > 0) await summarize(tx, w, at);
      await tx.bursts.save({ ...w, windowEnd: at + burstMs, sent: 1, held: 0, latestRequestId: null });
      return true;
    }
    if (w.sent < burstMax) {
      await tx.bursts.save({ ...w, sent: w.sent + 1 });
      return true;
    }
    await tx.bursts.save({ ...w, held: w.held + 1, latestRequestId: stored.record.id });
    // The first one held: the summary is due when the window ends; wake a scheduler for it.
    if (w.held === 0) scheduled(tx, w.windowEnd);
    return false;
  }

  function scheduled(tx: WriteTx, at: number | null) {
    tx.announce({ type: 'notices.scheduled' });
    tx.afterCommit(() => events.emit({ type: 'notices.scheduled', at }));
  }

  /** Reminders and expiring notices also reach `/v1/events`, on this daemon and the others. */
  function announce(tx: WriteTx, type: 'request.reminder' | 'request.expiring', stored: StoredRequest) {
    tx.announce({ type, requestId: stored.record.id });
    tx.afterCommit(() => events.emit({ type, request: stored.record, format: stored.format }));
  }

  /**
   * One event to every hook that wants it: mutes, `events`, `match`, bursts, then the outbox row.
   * `at` is the event's time; `now` when it is queued (later only for an expiry swept after its deadline).
   */
  async function dispatch(tx: WriteTx, type: HookEvent, stored: StoredRequest, at: number, now = at): Promise<number> {
    const facts = requestFacts(stored.record, stored.format);
    const wanting = hooks.filter((h) => h.events.has(type) && h.matches(facts));
    if (wanting.length === 0) return 0;
    if (mutedBy(await tx.mutes.active(now), stored.record.source)) return 0;
    let written = 0;
    for (const hook of wanting) {
      if (!(await burstAllows(tx, hook, stored, now))) continue;
      const env = requestEnvelope({
        type,
        id: newId(now),
        at,
        stored,
        baseUrl: baseUrl(),
        includeContent: hook.config.include_content ?? false,
        links: await linksFor(tx, hook, stored, now),
      });
      if (await insert(tx, hook, env, stored, now, stored.record.expires_at)) written++;
    }
    if (written) queued(tx);
    return written;
  }

  return {
    /** The hooks, as configured (for listings and tests). */
    hooks: () => hooks.map((h) => h.config),
    hook: (name: string) => byName.get(name)?.config,
    /** The inbox URL to link to when `public_url` is unset (the address this daemon listens on). */
    setLocalUrl(url: string) {
      localBase = url.replace(/\/+$/, '');
    },
    baseUrl,
    /** The decision-link key, made on first use (shared by every daemon through the store). */
    linkKey,

    /**
     * A sample message for `POST /v1/hooks/{name}/test`: a made-up request (never stored) in
     * the hook's format, for `type` (default `request.created`). Its decision links, if any,
     * lead to the "link not found" page: there is no such request.
     */
    sample(name: string, type: HookEvent, at: number, key: Buffer | null) {
      const hook = byName.get(name);
      if (!hook) return undefined;
      const stored = sampleRequest(name, type, at);
      const links = key && wantsLinks(hook, stored) ? makeLinks(key, hook, stored, at) : undefined;
      const env = requestEnvelope({ type, id: newId(at), at, stored, baseUrl: baseUrl(), includeContent: hook.config.include_content ?? false, links });
      return {
        id: env.id,
        type,
        requestId: stored.record.id,
        body: renderHookBody(hook.config, env, noticeText(env, { expiresAt: stored.record.expires_at, now: at })),
      };
    },

    /** Created hook: reminders and the expiring notice are scheduled, `request.created` sent (only for requests still pending). */
    async onCreated(stored: StoredRequest, tx: WriteTx, at: number): Promise<void> {
      if (stored.record.status !== 'pending' || hooks.length === 0) return;
      const r = stored.record;
      const remindAt = wantsReminders ? at + remindMs! : null;
      // Never for requests without a deadline, nor for those whose whole life is shorter than the warning.
      const expiringAt = wantsExpiring && r.expires_at !== null && r.expires_at - expiringMs! > at ? r.expires_at - expiringMs! : null;
      if (remindAt !== null || expiringAt !== null) {
        await tx.notices.schedule({ requestId: r.id, remindAt, expiringAt });
        scheduled(tx, Math.min(...[remindAt, expiringAt].filter((t): t is number => t !== null)));
      }
      await dispatch(tx, 'request.created', stored, at);
    },

    /** At start: reminders for the requests that were pending before reminders were turned on (none when they are off). */
    async remindPending(tx: WriteTx, now: number): Promise<number> {
      return wantsReminders ? tx.notices.remindPending(now, remindMs!) : 0;
    },

    /** Terminal hook: the request's pending notices are dropped and its transition sent. */
    async onTerminal(t: TerminalTransition, tx: WriteTx): Promise<void> {
      if (hooks.length === 0) return;
      if (wantsReminders || wantsExpiring) await tx.notices.remove(t.stored.record.id);
      await dispatch(tx, t.type, t.stored, t.at, t.now);
    },

    /**
     * Sends every reminder, expiring notice and burst summary due at `now`, each once: due rows
     * are claimed (another daemon sweeping at the same moment skips them) and moved on in the
     * same transaction. Returns how many events went out.
     */
    async sendDue(tx: WriteTx, now: number): Promise<number> {
      let sent = 0;
      let mutes: Awaited<ReturnType<WriteTx['mutes']['active']>> | undefined;
      for (const n of await tx.notices.claimDue(now, SWEEP_BATCH)) {
        const stored = await tx.requests.get(n.requestId);
        if (!stored || stored.record.status !== 'pending') {
          await tx.notices.remove(n.requestId);
          continue;
        }
        // A muted source sends no reminder or expiring notice, to hooks or on /v1/events.
        const muted = mutedBy((mutes ??= await tx.mutes.active(now)), stored.record.source);
        let { remindAt, expiringAt } = n;
        if (expiringAt !== null && expiringAt <= now) {
          expiringAt = null;
          // Expiring notices turned off since it was scheduled (a restart with expiring_before: none): not sent.
          if (!muted && wantsExpiring) {
            await dispatch(tx, 'request.expiring', stored, now);
            announce(tx, 'request.expiring', stored);
            sent++;
          }
        }
        if (remindAt !== null && remindAt <= now) {
          // Reminders turned off since it was scheduled (a restart with remind_every: none): none more.
          if (!wantsReminders) remindAt = null;
          else {
            // Missed reminders (the daemon was down) are sent once, not once per missed period.
            while (remindAt <= now) remindAt += remindMs!;
            if (stored.record.expires_at !== null && remindAt >= stored.record.expires_at) remindAt = null;
            if (!muted) {
              await dispatch(tx, 'request.reminder', stored, now);
              announce(tx, 'request.reminder', stored);
              sent++;
            }
          }
        }
        await tx.notices.update({ requestId: n.requestId, remindAt, expiringAt });
      }
      for (const w of await tx.bursts.claimEnded(now, SWEEP_BATCH)) {
        if (await summarize(tx, w, now)) {
          queued(tx);
          sent++;
        }
        await tx.bursts.save({ ...w, held: 0, latestRequestId: null });
      }
      return sent;
    },
  };
}

export type Notifier = ReturnType<typeof createNotifier>;

/** The made-up request a hook test describes, in the state `type` implies. */
function sampleRequest(hook: string, type: HookEvent, at: number): StoredRequest {
  const pending = type === 'request.created' || type === 'request.reminder' || type === 'request.expiring';
  const status = pending ? 'pending' : type === 'request.decided' ? 'approved' : type === 'request.expired' ? 'expired' : 'cancelled';
  const record: HandupRequest = {
    id: newId(at),
    title: `Test notification for hook ${hook}`,
    callback_url: null,
    summary: 'countersign sent this to check the hook. No request is waiting.',
    source: { integration: null, agent: 'countersign', session: null, cwd: null, repo: null, branch: null, host: null },
    kind: 'command',
    risk: 'low',
    previews: [{ type: 'command', command: { shell: 'echo hello' } }],
    options: [
      { id: 'approve', label: 'Approve', outcome: 'approve' },
      { id: 'deny', label: 'Deny', outcome: 'deny' },
    ],
    input: null,
    timeout: '10m',
    on_timeout: 'deny',
    dedupe_key: null,
    status,
    content_hash: `sha256:${'0'.repeat(64)}`,
    created_at: at,
    expires_at: at + 600_000,
    decision:
      type === 'request.decided'
        ? { option: 'approve', content_hash: `sha256:${'0'.repeat(64)}`, outcome: 'approve', feedback: null, fields: null, decided_by: 'admin', decided_at: at }
        : null,
  };
  return {
    record,
    format: 'handup',
    submitter: 'admin',
    nativeKey: null,
    nativeContext: null,
    nativeReply: null,
    resolvedAt: pending ? null : at,
  };
}

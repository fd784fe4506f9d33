import { mkdirSync, rmSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { WireAdapter } from './adapters/adapter.js';
import { adapters as registeredAdapters } from './adapters/registry.js';
import { buildApp } from './app.js';
import { resolveAdminToken } from './auth/admin-token.js';
import { createAuthThrottle } from './auth/auth-throttle.js';
import { createRateLimit } from './auth/rate-limit.js';
import { createTokenService } from './auth/token-service.js';
import { createWebSessionService } from './auth/web-session-service.js';
import { createBlobStore } from './blobs/blob-store.js';
import { createBlobSweeper } from './blobs/blob-sweeper.js';
import { createCallbackDispatcher, type CallbackDispatcherOverrides } from './callbacks/callback-dispatcher.js';
import { createCallbackOutboxHook } from './callbacks/callback-outbox-hook.js';
import { systemClock, type Clock } from './lib/clock.js';
import { createClusterView } from './cluster/cluster-view.js';
import { relayRemoteChanges } from './cluster/remote-change-relay.js';
import { ConfigError, hookProgramEnv, type Config } from './config.js';
import { createDecideHookRunner } from './decide-hooks/decide-hook-runner.js';
import type { Deps } from './deps.js';
import { durationMs } from './lib/durations.js';
import { createFormatCatalog } from './formats/format-catalog.js';
import { createRequestIntake } from './formats/request-intake.js';
import { createFrameContextReader } from './formats/frame-context.js';
import { createNativeDecisionCheck } from './formats/native-decision-check.js';
import { createNativeReplyHook } from './formats/native-reply-hook.js';
import { newId } from './lib/ids.js';
import { logDestination } from './lib/log-destination.js';
import { createLogger } from './lib/logger.js';
import { createLinkService } from './notify/link-service.js';
import { createMuteArrivalHook } from './notify/mute-arrival-hook.js';
import { createMuteService } from './notify/mute-service.js';
import { createHookSender } from './notify/hook-sender.js';
import { localUrl } from './lib/local-url.js';
import { createNoticeScheduler } from './notify/notice-scheduler.js';
import { createNotifier } from './notify/notifier.js';
import { NotifyEvents } from './notify/notify-events.js';
import { logLifecycle } from './observe/lifecycle-log.js';
import { createMetrics } from './observe/metrics.js';
import { timeStoreWrites } from './observe/timed-store.js';
import { createExpiryScheduler } from './requests/expiry-scheduler.js';
import { RequestEvents } from './requests/request-events.js';
import { createRequestService } from './requests/request-service.js';
import { createWaiters } from './requests/waiters.js';
import { createAutoModeService } from './rules/auto-mode-service.js';
import { createCreationPolicy } from './rules/creation-policy.js';
import { createHistoryFactsHook } from './rules/history-facts-hook.js';
import { PolicyEvents } from './rules/policy-events.js';
import { createRuleExpiry } from './rules/rule-expiry.js';
import { createRuleService } from './rules/rule-service.js';
import { openStore } from './storage/open-store.js';
import type { Store } from './storage/store.js';
import { VERSION } from './lib/version.js';
import { createEventsHub } from './ws/events-hub.js';

export interface RunningServer {
  app: FastifyInstance;
  deps: Deps;
  url: string;
  adminToken: string;
  /** True when this start generated the admin token (print it once). */
  adminTokenGenerated: boolean;
  /** Resolves when no expiry sweep (of requests or stored rules) is running (tests with a fake clock wait on it). */
  settled(): Promise<void>;
  /** Resolves when no decide hook is running (tests). */
  hooksIdle(): Promise<void>;
  close(): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  log?: Logger;
  /** Listen (default true). Tests may build everything and use `app.inject` instead. */
  listen?: boolean;
  /** The wire formats served (default: the registry). Tests add their own adapters here. */
  adapters?: readonly WireAdapter<any, any, any>[];
  /** Callback network and randomness (tests inject a DNS resolver, a dial spy, a fixed jitter). */
  callbacks?: CallbackDispatcherOverrides;
}

// How long replies still being written at shutdown may take before their connections are cut.
const SHUTDOWN_CUT_MS = 5_000;

/** Wires every part from the config and an open store: the one place dependencies are created. */
export function createDeps(
  config: Readonly<Config>,
  opened: Store,
  adminToken: string,
  { clock = systemClock, log, adapters = registeredAdapters, node = newId() }: StartOptions & { node?: string } = {},
): Deps {
  const logger = log ?? createLogger(config.log_level);
  const events = new RequestEvents();
  const metrics = createMetrics({
    version: VERSION,
    node,
    store: opened.info.kind,
    pending: () => opened.requests.countPending(),
    eventSubscribers: () => hub.size(),
  });
  events.on(metrics.requestEvent);
  // Every write below is timed, and the lifecycle lines are logged from its audit rows.
  const store = timeStoreWrites(logLifecycle(opened, logger.child({ module: 'lifecycle' })), metrics.transaction);
  const notify = new NotifyEvents();
  const formats = createFormatCatalog(adapters);
  const notifier = createNotifier({ config, events: notify, log: logger.child({ module: 'notify' }) });
  const policyEvents = new PolicyEvents();
  const rules = createRuleService({
    store,
    clock,
    events: policyEvents,
    configRules: config.rules,
    sessionScopeTtlMs: durationMs(config.policy.session_scope_ttl),
  });
  const requests = createRequestService({
    store,
    clock,
    events,
    policy: createCreationPolicy({ rules }),
    scopedAllow: (tx, stored, scope, actor, at) =>
      rules.addScopeRule(tx, stored.record, stored.format, scope, actor, at, {
        nativeGrant: scope === 'session' && formats.get(stored.format)?.grantsSession?.(stored.nativeContext) === true,
      }),
    terminalHooks: [
      // First: later hooks (the callback outbox) read the reply it leaves on `stored.nativeReply`.
      createNativeReplyHook({ formats, log: logger.child({ module: 'replies' }) }),
      createCallbackOutboxHook(),
      notifier.onTerminal,
      createHistoryFactsHook(),
    ],
    decisionChecks: [createNativeDecisionCheck({ formats })],
    arrivalHooks: [createMuteArrivalHook()],
    createdHooks: [notifier.onCreated],
  });
  const rateLimit = createRateLimit({ rates: store.rates, clock, perMinute: config.requests.max_per_minute });
  const webSessions = createWebSessionService({
    store,
    clock,
    adminToken,
    idleMs: durationMs(config.web.session_idle_timeout),
    maxMs: durationMs(config.web.session_max_age),
  });
  const hub = createEventsHub({
    events,
    notify,
    log: logger.child({ module: 'events' }),
    pingIntervalMs: durationMs(config.events.ping_interval),
    maxBufferedBytes: config.events.max_buffered_bytes,
    isSessionLive: (id) => webSessions.isLive(id),
    sessionCheckMs: durationMs(config.web.session_idle_timeout) / 2,
    policy: policyEvents,
  });
  return {
    config,
    log: logger,
    clock,
    store,
    version: VERSION,
    events,
    requests,
    waiters: createWaiters({ events, clock }),
    tokens: createTokenService({ store, clock, adminToken }),
    webSessions,
    rateLimit,
    authThrottle: createAuthThrottle({ clock }),
    blobs: createBlobStore({ store, clock, quotaBytes: config.blobs.quota_per_token }),
    hub,
    formats,
    intake: createRequestIntake({ requests, config, clock, frameContext: createFrameContextReader({ now: () => clock.now() }) }),
    cluster: createClusterView({
      store,
      clock,
      log: logger.child({ module: 'cluster' }),
      id: node,
      version: VERSION,
      heartbeatMs: durationMs(config.cluster.heartbeat_interval),
    }),
    notify,
    notifier,
    mutes: createMuteService({ store, clock, events: notify }),
    links: createLinkService({ store, requests, clock, config }),
    hookSender: createHookSender({
      clock,
      userAgent: `countersign/${VERSION}`,
      defaultTimeoutMs: durationMs(config.callbacks.timeout),
      env: hookProgramEnv(config),
    }),
    rules,
    auto: createAutoModeService({ store, clock, events: policyEvents, log: logger.child({ module: 'auto' }) }),
    policyEvents,
    metrics,
  };
}

/** Opens the store, wires, listens. Shutdown answers long-polls and keeps every commit. */
export async function startServer(config: Readonly<Config>, options: StartOptions = {}): Promise<RunningServer> {
  mkdirSync(config.data_dir, { recursive: true, mode: 0o700 });
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger(config.log_level, logDestination(config.log.format));
  const node = newId(clock.now());
  const store = await openStore(config, { node, log, now: () => clock.now() });
  let deps: Deps;
  let admin: ReturnType<typeof resolveAdminToken>;
  try {
    admin = resolveAdminToken(config.data_dir, config.admin_token);
    deps = createDeps(config, store, admin.token, { ...options, clock, log, node });
    // Rule ids are unique across the config file and the store.
    const clashes = await deps.rules.checkConfigIds();
    if (clashes.length)
      throw new ConfigError(
        `invalid configuration:\n  rules: rule id "${clashes[0]}" is already a stored rule (remove it over the API, or rename the config rule)`,
      );
  } catch (err) {
    await store.close();
    throw err;
  }
  const heartbeatMs = durationMs(config.cluster.heartbeat_interval);
  const scheduler = createExpiryScheduler({ service: deps.requests, events: deps.events, clock, log: log.child({ module: 'expiry' }) });
  const callbacks = createCallbackDispatcher({
    store: deps.store,
    node,
    liveNodes: () => deps.cluster.liveIdsIfKnown(),
    takeoverCheckMs: heartbeatMs,
    events: deps.events,
    clock,
    config: config.callbacks,
    log: log.child({ module: 'callbacks' }),
    userAgent: `countersign/${deps.version}`,
    hooks: { get: deps.notifier.hook, all: deps.notifier.hooks, events: deps.notify, sender: deps.hookSender },
    onAttempt: deps.metrics.callbackAttempt,
    ...options.callbacks,
  });
  const blobSweeper = createBlobSweeper({
    store: deps.blobs,
    clock: deps.clock,
    retentionMs: durationMs(config.blobs.retention),
    log: deps.log.child({ module: 'blobs' }),
  });
  const notices = createNoticeScheduler({ store: deps.store, notifier: deps.notifier, events: deps.notify, clock, log: log.child({ module: 'notify' }) });
  const hooks = createDecideHookRunner({
    hooks: config.decide_hooks,
    requests: deps.requests,
    events: deps.events,
    log: log.child({ module: 'decide-hooks' }),
    env: hookProgramEnv(config),
    userAgent: `countersign/${deps.version}`,
  });
  const app = await buildApp(deps);
  await deps.cluster.start();
  const stopRelay = relayRemoteChanges({
    store: deps.store,
    events: deps.events,
    notify: deps.notify,
    log: log.child({ module: 'cluster' }),
    policy: { events: deps.policyEvents, auto: () => deps.auto.get() },
    sessions: { ended: () => deps.hub.checkSessions() },
    waiters: deps.waiters,
  });
  const ruleExpiry = createRuleExpiry({ rules: deps.rules, events: deps.policyEvents, clock, log: log.child({ module: 'rules' }) });
  // History that ended before this version kept no facts for the simulation: index it once, in the background.
  const stopIndexing = new AbortController();
  const indexing = deps.rules
    .indexHistory(stopIndexing.signal)
    .then((n) => n > 0 && log.info({ requests: n }, 'indexed ended requests for rule simulations'))
    .catch((err: unknown) => log.warn({ err: (err as Error).message }, 'cannot index ended requests for rule simulations; trying again at the next start'));
  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      scheduler.stop();
      notices.stop();
      deps.auto.stop();
      ruleExpiry.stop();
      stopIndexing.abort();
      // Queued deliveries stay in the outbox; an attempt cut short is released for the next start.
      // Stopped first, before any await: the grace for attempts in flight starts now.
      const callbacksStopped = callbacks.stop();
      await blobSweeper.stop();
      await callbacksStopped;
      await deps.hookSender.close();
      // Hook programs still running are killed; their requests wait for a person.
      await hooks.stop();
      await indexing;
      stopRelay();
      // Long-polls are answered with the still-pending record, reviewers told we are going away.
      deps.waiters.releaseAll();
      deps.hub.close();
      // Replies in flight get a moment to finish; a connection still open after that (a
      // keep-alive socket the client left mid-request) is cut rather than waited for.
      const cut = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_CUT_MS);
      await app.close();
      clearTimeout(cut);
      await scheduler.idle();
      await ruleExpiry.idle();
      await notices.idle();
      await deps.cluster.stop();
      await store.close();
    })();
    return closing;
  };

  let url = '';
  if (options.listen !== false) {
    try {
      await app.listen({ host: config.host, port: config.port });
    } catch (err) {
      // A daemon that cannot listen must not go on working the database it shares (expiring,
      // delivering) while its operator is told it did not start; and the admin token it made is
      // made again, and shown, at the start that succeeds.
      await close();
      if (admin.generated && admin.file) rmSync(admin.file, { force: true });
      throw err;
    }
    const addr = app.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : config.port;
    url = localUrl(config.host, port);
    deps.notifier.setLocalUrl(url);
  }

  // What acts on shared state starts once the daemon is sure to run (it listens): auto mode's
  // start turns it off for every daemon, and the workers change requests and rules.
  await deps.auto.start();
  await ruleExpiry.start();
  await callbacks.start();
  await scheduler.start();
  await blobSweeper.start();
  await notices.start();
  // Sessions of an admin token this daemon no longer has end for good, in the background.
  void deps.webSessions.endOtherCredentials().catch((err: unknown) => log.warn({ err }, 'cannot end the web sessions of the previous admin token'));

  return {
    app,
    deps,
    url,
    adminToken: admin.token,
    adminTokenGenerated: admin.generated,
    settled: async () => {
      await scheduler.idle();
      await ruleExpiry.idle();
      await notices.idle();
    },
    hooksIdle: () => hooks.idle(),
    close,
  };
}

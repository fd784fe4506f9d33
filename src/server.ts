import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { WireAdapter } from './adapters/adapter.js';
import { adapters as registeredAdapters } from './adapters/registry.js';
import { buildApp } from './app.js';
import { resolveAdminToken } from './auth/admin-token.js';
import { createAuthThrottle } from './auth/auth-throttle.js';
import { createRateLimiter } from './auth/rate-limiter.js';
import { createTokenRepository } from './auth/token-repository.js';
import { createTokenService } from './auth/token-service.js';
import { createWebSessionRepository } from './auth/web-session-repository.js';
import { createWebSessionService } from './auth/web-session-service.js';
import { createBlobRepository } from './blobs/blob-repository.js';
import { createBlobStore } from './blobs/blob-store.js';
import { createBlobSweeper } from './blobs/blob-sweeper.js';
import { createCallbackDispatcher, type CallbackDispatcherOverrides } from './callbacks/callback-dispatcher.js';
import { createCallbackOutboxHook } from './callbacks/callback-outbox-hook.js';
import { createDeliveryRepository } from './callbacks/delivery-repository.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import { createCounterRepository } from './db/counter-repository.js';
import { openDatabase, type Db } from './db/database.js';
import { migrate } from './db/migrate.js';
import { createWriteBatcher } from './db/write-batcher.js';
import type { Deps } from './deps.js';
import { durationMs } from './durations.js';
import { createFormatCatalog } from './formats/format-catalog.js';
import { createNativeIntake } from './formats/native-intake.js';
import { createNativeDecisionCheck } from './formats/native-decision-check.js';
import { createNativeReplyHook } from './formats/native-reply-hook.js';
import { createLogger } from './logger.js';
import { createExpiryScheduler } from './requests/expiry-scheduler.js';
import { RequestEvents } from './requests/request-events.js';
import { createRequestRepository } from './requests/request-repository.js';
import { createRequestService, type TerminalHook } from './requests/request-service.js';
import { createWaiters } from './requests/waiters.js';
import { VERSION } from './version.js';
import { createEventsHub } from './ws/events-hub.js';

export interface RunningServer {
  app: FastifyInstance;
  deps: Deps;
  url: string;
  adminToken: string;
  /** True when this start generated the admin token (print it once). */
  adminTokenGenerated: boolean;
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

/** Wires every part from the config: the one place dependencies are created. */
export function createDeps(config: Readonly<Config>, db: Db, adminToken: string, { clock = systemClock, log, adapters = registeredAdapters }: StartOptions = {}): Deps {
  const logger = log ?? createLogger(config.log_level);
  const events = new RequestEvents();
  const formats = createFormatCatalog(adapters);
  const repo = createRequestRepository(db);
  const deliveries = createDeliveryRepository(db);
  const terminalHooks: TerminalHook[] = [
    // First: later hooks (the callback outbox) read the reply it leaves on `stored.nativeReply`.
    createNativeReplyHook({ formats, repo, counters: createCounterRepository(db), log: logger.child({ module: 'replies' }) }),
    createCallbackOutboxHook({ deliveries }),
  ];
  const writes = createWriteBatcher(db);
  const webSessions = createWebSessionService({
    db,
    sessions: createWebSessionRepository(db),
    clock,
    adminToken,
    idleMs: durationMs(config.web.session_idle_timeout),
    maxMs: durationMs(config.web.session_max_age),
  });
  const decisionChecks = [createNativeDecisionCheck({ formats })];
  const requests = createRequestService({ db, repo, clock, events, terminalHooks, decisionChecks, afterCommit: writes.afterCommit });
  return {
    config,
    log: logger,
    clock,
    db,
    version: VERSION,
    events,
    writes,
    requests,
    waiters: createWaiters({ events, clock }),
    tokens: createTokenService({ db, tokens: createTokenRepository(db), clock, adminToken }),
    webSessions,
    rateLimiter: createRateLimiter({ perMinute: config.requests.max_per_minute, clock }),
    authThrottle: createAuthThrottle({ clock }),
    blobs: createBlobStore({ db, repo: createBlobRepository(db), clock, quotaBytes: config.blobs.quota_per_token }),
    hub: createEventsHub({
      events,
      log: logger.child({ module: 'events' }),
      pingIntervalMs: durationMs(config.events.ping_interval),
      maxBufferedBytes: config.events.max_buffered_bytes,
      isSessionLive: (id) => webSessions.isLive(id),
    }),
    formats,
    nativeIntake: createNativeIntake({ requests, config, clock }),
    deliveries,
  };
}

/** Opens the database, migrates, wires, listens. Shutdown answers long-polls and keeps every commit. */
export async function startServer(config: Readonly<Config>, options: StartOptions = {}): Promise<RunningServer> {
  mkdirSync(config.data_dir, { recursive: true, mode: 0o700 });
  const db = openDatabase(join(config.data_dir, 'countersign.db'), { synchronous: config.storage.synchronous });
  try {
    migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }
  const admin = resolveAdminToken(config.data_dir, config.admin_token);
  const deps = createDeps(config, db, admin.token, options);
  const scheduler = createExpiryScheduler({ service: deps.requests, events: deps.events, clock: deps.clock, log: deps.log.child({ module: 'expiry' }) });
  const callbacks = createCallbackDispatcher({
    db,
    deliveries: deps.deliveries,
    appendAudit: createRequestRepository(db).appendAudit,
    events: deps.events,
    clock: deps.clock,
    config: config.callbacks,
    log: deps.log.child({ module: 'callbacks' }),
    userAgent: `countersign/${deps.version}`,
    ...options.callbacks,
  });
  const blobSweeper = createBlobSweeper({
    store: deps.blobs,
    clock: deps.clock,
    retentionMs: durationMs(config.blobs.retention),
    log: deps.log.child({ module: 'blobs' }),
  });
  const app = await buildApp(deps);
  callbacks.start();
  scheduler.start();
  blobSweeper.start();

  let url = '';
  if (options.listen !== false) {
    await app.listen({ host: config.host, port: config.port });
    const addr = app.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    url = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${port}`;
  }

  let closing: Promise<void> | null = null;
  return {
    app,
    deps,
    url,
    adminToken: admin.token,
    adminTokenGenerated: admin.generated,
    close() {
      closing ??= (async () => {
        scheduler.stop();
        blobSweeper.stop();
        // Queued deliveries stay in the outbox; an attempt cut short is released for the next start.
        await callbacks.stop();
        // Long-polls are answered with the still-pending record, reviewers told we are going away.
        deps.waiters.releaseAll();
        deps.hub.close();
        await app.close();
        db.close();
      })();
      return closing;
    },
  };
}

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import { resolveAdminToken } from './auth/admin-token.js';
import { createRateLimiter } from './auth/rate-limiter.js';
import { createTokenRepository } from './auth/token-repository.js';
import { createTokenService } from './auth/token-service.js';
import { createBlobRepository } from './blobs/blob-repository.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import { openDatabase, type Db } from './db/database.js';
import { migrate } from './db/migrate.js';
import type { Deps } from './deps.js';
import { durationMs } from './durations.js';
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
}

/** Wires every part from the config: the one place dependencies are created. */
export function createDeps(config: Readonly<Config>, db: Db, adminToken: string, { clock = systemClock, log }: StartOptions = {}): Deps {
  const logger = log ?? createLogger(config.log_level);
  const events = new RequestEvents();
  const terminalHooks: TerminalHook[] = [];
  const requests = createRequestService({ db, repo: createRequestRepository(db), clock, events, terminalHooks });
  return {
    config,
    log: logger,
    clock,
    db,
    version: VERSION,
    events,
    requests,
    waiters: createWaiters({ events, clock }),
    tokens: createTokenService({ db, tokens: createTokenRepository(db), clock, adminToken }),
    rateLimiter: createRateLimiter({ perMinute: config.requests.max_per_minute, clock }),
    blobs: createBlobRepository({ db, clock }),
    hub: createEventsHub({
      events,
      log: logger.child({ module: 'events' }),
      pingIntervalMs: durationMs(config.events.ping_interval),
      maxBufferedBytes: config.events.max_buffered_bytes,
    }),
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
  const app = await buildApp(deps);
  scheduler.start();

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

import type { Logger } from 'pino';
import type { AuthThrottle } from './auth/auth-throttle.js';
import type { RateLimiter } from './auth/rate-limiter.js';
import type { TokenService } from './auth/token-service.js';
import type { BlobStore } from './blobs/blob-store.js';
import type { WebSessionService } from './auth/web-session-service.js';
import type { DeliveryRepository } from './callbacks/delivery-repository.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Db } from './db/database.js';
import type { WriteBatcher } from './db/write-batcher.js';
import type { FormatCatalog } from './formats/format-catalog.js';
import type { NativeIntake } from './formats/native-intake.js';
import type { RequestEvents } from './requests/request-events.js';
import type { RequestService } from './requests/request-service.js';
import type { Waiters } from './requests/waiters.js';
import type { EventsHub } from './ws/events-hub.js';

/** The one container every route and service is wired from (see server.ts). */
export interface Deps {
  config: Readonly<Config>;
  log: Logger;
  clock: Clock;
  db: Db;
  version: string;
  events: RequestEvents;
  /** Group commit for the hot write paths (create, decide, cancel over HTTP). */
  writes: WriteBatcher;
  requests: RequestService;
  waiters: Waiters;
  tokens: TokenService;
  /** The reviewer page's sign-in sessions. */
  webSessions: WebSessionService;
  rateLimiter: RateLimiter;
  /** Failed authentications per client address (every place that takes a secret uses it). */
  authThrottle: AuthThrottle;
  blobs: BlobStore;
  hub: EventsHub;
  /** The wire formats served (the adapter registry, unless a test wires its own). */
  formats: FormatCatalog;
  nativeIntake: NativeIntake;
  /** The callback outbox (deliveries and their attempts). */
  deliveries: DeliveryRepository;
}

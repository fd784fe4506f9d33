import type { Logger } from 'pino';
import type { AuthThrottle } from './auth/auth-throttle.js';
import type { RateLimit } from './auth/rate-limit.js';
import type { TokenService } from './auth/token-service.js';
import type { WebSessionService } from './auth/web-session-service.js';
import type { BlobStore } from './blobs/blob-store.js';
import type { Clock } from './lib/clock.js';
import type { ClusterView } from './cluster/cluster-view.js';
import type { Config } from './config.js';
import type { FormatCatalog } from './formats/format-catalog.js';
import type { RequestIntake } from './formats/request-intake.js';
import type { HookSender } from './notify/hook-sender.js';
import type { LinkService } from './notify/link-service.js';
import type { MuteService } from './notify/mute-service.js';
import type { Notifier } from './notify/notifier.js';
import type { NotifyEvents } from './notify/notify-events.js';
import type { Metrics } from './observe/metrics.js';
import type { RequestEvents } from './requests/request-events.js';
import type { RequestService } from './requests/request-service.js';
import type { Waiters } from './requests/waiters.js';
import type { AutoModeService } from './rules/auto-mode-service.js';
import type { PolicyEvents } from './rules/policy-events.js';
import type { RuleService } from './rules/rule-service.js';
import type { Store } from './storage/store.js';
import type { EventsHub } from './ws/events-hub.js';

/** The one container every route and service is wired from (see server.ts). */
export interface Deps {
  config: Readonly<Config>;
  log: Logger;
  clock: Clock;
  /** Everything kept: SQLite or PostgreSQL, behind one port. */
  store: Store;
  version: string;
  events: RequestEvents;
  requests: RequestService;
  waiters: Waiters;
  tokens: TokenService;
  /** The reviewer page's sign-in sessions. */
  webSessions: WebSessionService;
  /** A submit token's create budget (shared by every daemon on the store). */
  rateLimit: RateLimit;
  /** Failed authentications per client address (every place that takes a secret uses it). */
  authThrottle: AuthThrottle;
  blobs: BlobStore;
  hub: EventsHub;
  /** The wire formats served (the adapter registry, unless a test wires its own). */
  formats: FormatCatalog;
  intake: RequestIntake;
  /** This daemon and the others on the store. */
  cluster: ClusterView;
  /** Notifications: the hooks' outbox writer, its events, mutes and decision links. */
  notify: NotifyEvents;
  notifier: Notifier;
  mutes: MuteService;
  links: LinkService;
  /** One attempt of one hook message (the delivery worker, and hook tests). */
  hookSender: HookSender;
  /** Policy: rules, auto mode, and their change events. */
  rules: RuleService;
  auto: AutoModeService;
  policyEvents: PolicyEvents;
  /** This daemon's Prometheus metrics (GET /v1/metrics). */
  metrics: Metrics;
}

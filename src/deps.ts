import type { Logger } from 'pino';
import type { RateLimit } from './auth/rate-limit.js';
import type { TokenService } from './auth/token-service.js';
import type { BlobService } from './blobs/blob-service.js';
import type { Clock } from './clock.js';
import type { ClusterView } from './cluster/cluster-view.js';
import type { Config } from './config.js';
import type { FormatCatalog } from './formats/format-catalog.js';
import type { NativeIntake } from './formats/native-intake.js';
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
  /** A submit token's create budget. */
  rateLimit: RateLimit;
  blobs: BlobService;
  hub: EventsHub;
  /** The wire formats served (the adapter registry, unless a test wires its own). */
  formats: FormatCatalog;
  nativeIntake: NativeIntake;
  /** This daemon and the others on the store. */
  cluster: ClusterView;
  /** Policy (policy.md): rules, auto mode, and their change events. */
  rules: RuleService;
  auto: AutoModeService;
  policyEvents: PolicyEvents;
}

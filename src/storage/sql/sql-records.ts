import type { BlobRecords } from '../blob-records.js';
import type { ClusterNodes } from '../cluster-nodes.js';
import type { Counters } from '../counters.js';
import type { DaemonKeys } from '../daemon-keys.js';
import type { DeliveryOutbox } from '../delivery-outbox.js';
import type { MuteRecords } from '../mute-records.js';
import type { BurstRecords } from '../notify-bursts.js';
import type { NoticeRecords } from '../request-notices.js';
import type { PolicyRecords } from '../policy-records.js';
import type { RequestRecords } from '../request-records.js';
import type { TokenRecords } from '../token-records.js';
import type { WebSessionRecords } from '../web-session-records.js';
import { createSqlBlobRecords } from './sql-blob-records.js';
import { createSqlClusterNodes } from './sql-cluster-nodes.js';
import { createSqlCounters } from './sql-counters.js';
import { createSqlDaemonKeys } from './sql-daemon-keys.js';
import { createSqlDeliveryOutbox } from './sql-delivery-outbox.js';
import { createSqlMuteRecords } from './sql-mute-records.js';
import { createSqlNotifyBursts } from './sql-notify-bursts.js';
import { createSqlRequestNotices } from './sql-request-notices.js';
import { createSqlPolicyRecords } from './sql-policy-records.js';
import { createSqlRequestRecords } from './sql-request-records.js';
import type { SqlDialect, SqlRunner } from './sql-runner.js';
import { createSqlTokenRecords } from './sql-token-records.js';
import { createSqlWebSessionRecords } from './sql-web-session-records.js';

/** Every record module of the store, bound to one connection. */
export interface SqlRecords {
  requests: RequestRecords;
  deliveries: DeliveryOutbox;
  tokens: TokenRecords;
  blobs: BlobRecords;
  webSessions: WebSessionRecords;
  counters: Counters;
  nodes: ClusterNodes;
  mutes: MuteRecords;
  bursts: BurstRecords;
  notices: NoticeRecords;
  keys: DaemonKeys;
  policy: PolicyRecords;
}

export function createSqlRecords(sql: SqlRunner, dialect: SqlDialect): SqlRecords {
  return {
    requests: createSqlRequestRecords(sql, dialect),
    deliveries: createSqlDeliveryOutbox(sql, dialect),
    tokens: createSqlTokenRecords(sql),
    blobs: createSqlBlobRecords(sql, dialect),
    webSessions: createSqlWebSessionRecords(sql),
    counters: createSqlCounters(sql),
    nodes: createSqlClusterNodes(sql, dialect),
    mutes: createSqlMuteRecords(sql),
    bursts: createSqlNotifyBursts(sql, dialect),
    notices: createSqlRequestNotices(sql, dialect),
    keys: createSqlDaemonKeys(sql),
    policy: createSqlPolicyRecords(sql),
  };
}

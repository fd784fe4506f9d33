import type { BlobRecords } from '../blob-records.js';
import type { ClusterNodes } from '../cluster-nodes.js';
import type { Counters } from '../counters.js';
import type { DeliveryOutbox } from '../delivery-outbox.js';
import type { PolicyRecords } from '../policy-records.js';
import type { RequestRecords } from '../request-records.js';
import type { TokenRecords } from '../token-records.js';
import { createSqlBlobRecords } from './sql-blob-records.js';
import { createSqlClusterNodes } from './sql-cluster-nodes.js';
import { createSqlCounters } from './sql-counters.js';
import { createSqlDeliveryOutbox } from './sql-delivery-outbox.js';
import { createSqlPolicyRecords } from './sql-policy-records.js';
import { createSqlRequestRecords } from './sql-request-records.js';
import type { SqlDialect, SqlRunner } from './sql-runner.js';
import { createSqlTokenRecords } from './sql-token-records.js';

/** Every record module of the store, bound to one connection. */
export interface SqlRecords {
  requests: RequestRecords;
  deliveries: DeliveryOutbox;
  tokens: TokenRecords;
  blobs: BlobRecords;
  counters: Counters;
  nodes: ClusterNodes;
  policy: PolicyRecords;
}

export function createSqlRecords(sql: SqlRunner, dialect: SqlDialect): SqlRecords {
  return {
    requests: createSqlRequestRecords(sql, dialect),
    deliveries: createSqlDeliveryOutbox(sql, dialect),
    tokens: createSqlTokenRecords(sql),
    blobs: createSqlBlobRecords(sql),
    counters: createSqlCounters(sql),
    nodes: createSqlClusterNodes(sql),
    policy: createSqlPolicyRecords(sql),
  };
}

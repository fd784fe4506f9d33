import type { RequestReads, StoredRequest } from '../request-records.js';
import { COLS, toStored, type RequestRow } from '../sql/sql-request-records.js';
import type { SqlRunner } from '../sql/sql-runner.js';

/** A lookup whose calls in one event-loop turn are answered together: by `one` when alone, else by `many`. */
function perTurn<Q>(one: (q: Q) => Promise<StoredRequest | undefined>, many: (qs: Q[]) => Promise<Array<StoredRequest | undefined>>) {
  let batch: Array<{ q: Q; resolve: (s: StoredRequest | undefined) => void; reject: (e: unknown) => void }> = [];
  function run() {
    const taken = batch;
    batch = [];
    const answers = taken.length === 1 ? one(taken[0]!.q).then((s) => [s]) : many(taken.map((t) => t.q));
    answers.then(
      (found) => taken.forEach((t, i) => t.resolve(found[i])),
      (err: unknown) => taken.forEach((t) => t.reject(err)),
    );
  }
  return (q: Q) =>
    new Promise<StoredRequest | undefined>((resolve, reject) => {
      if (batch.length === 0) setImmediate(run);
      batch.push({ q, resolve, reject });
    });
}

/**
 * The store's key lookups (a dedupe key, a native key: one for nearly every create, outside any
 * transaction) made in the same event-loop turn share one round trip: under load a turn brings
 * many creates, and a round trip (a socket write and read, the driver's bookkeeping) costs the
 * daemon more than the lookup costs the database. The combined statement probes the key's
 * unique index once per key asked, as the plain statement does; each lookup takes the row of its
 * own key. A lookup alone in its turn is the plain statement.
 */
export function batchKeyLookups(reads: RequestReads, sql: SqlRunner): RequestReads {
  const rows = async (text: string, args: unknown[]) => (await sql.all<RequestRow>(text, args)).map(toStored);

  // One probe of the key's unique index per key asked (LIMIT 1 keeps the planner from turning
  // the lateral subquery into a join that walks every pending request instead).
  const findPendingByDedupe = perTurn<{ submitter: string; key: string }>(
    ({ submitter, key }) => reads.findPendingByDedupe(submitter, key),
    async (qs) => {
      const found = await rows(
        `SELECT r.* FROM unnest(?::text[], ?::text[]) AS k(submitter, dedupe_key) CROSS JOIN LATERAL (SELECT ${COLS} FROM requests
          WHERE submitter = k.submitter AND dedupe_key = k.dedupe_key AND status = 'pending' AND native_key IS NULL LIMIT 1) r`,
        [qs.map((q) => q.submitter), qs.map((q) => q.key)],
      );
      return qs.map((q) => found.find((s) => s.submitter === q.submitter && s.record.dedupe_key === q.key));
    },
  );

  const findByNativeKey = perTurn<{ format: string; submitter: string; key: string }>(
    ({ format, submitter, key }) => reads.findByNativeKey(format, submitter, key),
    async (qs) => {
      const found = await rows(
        `SELECT r.* FROM unnest(?::text[], ?::text[], ?::text[]) AS k(format, submitter, native_key) CROSS JOIN LATERAL (SELECT ${COLS} FROM requests
          WHERE format = k.format AND submitter = k.submitter AND native_key = k.native_key LIMIT 1) r`,
        [qs.map((q) => q.format), qs.map((q) => q.submitter), qs.map((q) => q.key)],
      );
      return qs.map((q) => found.find((s) => s.format === q.format && s.submitter === q.submitter && s.nativeKey === q.key));
    },
  );

  return {
    ...reads,
    findPendingByDedupe: (submitter, key) => findPendingByDedupe({ submitter, key }),
    findByNativeKey: (format, submitter, key) => findByNativeKey({ format, submitter, key }),
  };
}

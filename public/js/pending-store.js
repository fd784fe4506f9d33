/**
 * The pending queue as the page knows it: filled by a resync (GET /v1/requests) and kept
 * current by `/v1/events`. Terminal states never change back (docs/api.md), so an id seen
 * ending is never re-added, whatever order a resync and the events arrive in.
 */

export function createPendingStore() {
  const items = new Map();
  const formats = new Map();
  const ended = new Set();
  const listeners = new Set();
  const notify = (change) => {
    for (const fn of listeners) fn(change);
  };

  return {
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },

    /** Replaces the queue with a fresh server listing (`formatOf` maps ids to wire formats). */
    replaceAll(records, formatOf) {
      items.clear();
      for (const [id, format] of formatOf) formats.set(id, format);
      for (const r of records) if (r.status === 'pending' && !ended.has(r.id)) items.set(r.id, r);
      notify({ type: 'resync' });
    },

    /** Applies one `/v1/events` message (or a record the API just returned to us). */
    apply({ type, request, format }) {
      if (!request?.id) return;
      if (format) formats.set(request.id, format);
      if (request.status === 'pending') {
        if (ended.has(request.id)) return;
        items.set(request.id, request);
      } else {
        ended.add(request.id);
        items.delete(request.id);
      }
      notify({ type, request });
    },

    get: (id) => items.get(id),
    has: (id) => items.has(id),
    formatOf: (id) => formats.get(id) ?? null,
    get size() {
      return items.size;
    },

    /** Newest first (ULIDs sort by creation time). */
    list() {
      return [...items.values()].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1));
    },

    clear() {
      items.clear();
      ended.clear();
      notify({ type: 'resync' });
    },
  };
}

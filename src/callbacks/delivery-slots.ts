import type { DeliveryFilter } from '../storage/delivery-outbox.js';

/**
 * How the delivery worker (callback-dispatcher.ts) shares its attempts in flight, so one slow or
 * hanging receiver does not hold up everyone else's (docs/callbacks.md): at most
 * DELIVERY_SLOTS at once on a daemon, at most PER_HOOK_SLOTS of one hook, and each kind
 * (callbacks; hook messages, all hooks together) at most DELIVERY_SLOTS - RESERVED_SLOTS, so
 * the other kind always has RESERVED_SLOTS left.
 */
export const DELIVERY_SLOTS = 8;
export const PER_HOOK_SLOTS = 2;
export const RESERVED_SLOTS = 2;
const PER_KIND_SLOTS = DELIVERY_SLOTS - RESERVED_SLOTS;

/**
 * Which due rows there is room for, given the hook of each attempt in flight (null for a
 * callback); null when there is room for none.
 */
export function roomFor(inFlight: Iterable<string | null>): DeliveryFilter | null {
  let total = 0;
  let callbacks = 0;
  let hooks = 0;
  const perHook = new Map<string, number>();
  for (const hook of inFlight) {
    total++;
    if (hook === null) callbacks++;
    else {
      hooks++;
      perHook.set(hook, (perHook.get(hook) ?? 0) + 1);
    }
  }
  if (total >= DELIVERY_SLOTS) return null;
  const filter: DeliveryFilter = {
    callbacks: callbacks < PER_KIND_SLOTS,
    hooks: hooks < PER_KIND_SLOTS,
    busyHooks: [...perHook].filter(([, n]) => n >= PER_HOOK_SLOTS).map(([hook]) => hook),
  };
  return filter.callbacks || filter.hooks ? filter : null;
}

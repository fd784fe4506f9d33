/** Per-key rate limits (submit tokens' creates), counted across every daemon on the store. */
export interface RateCounters {
  /**
   * Counts one event for `key` at `now` if fewer than `limit` were counted in the `windowMs`
   * before it, and says whether it was counted (false: over the limit, nothing counted).
   */
  take(key: string, limit: number, windowMs: number, now: number): Promise<boolean>;
}

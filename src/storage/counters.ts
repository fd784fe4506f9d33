/**
 * Named counters that survive restarts and are shared by every daemon on the store. `next`
 * runs inside the caller's transaction, so a number is used up only if that transaction commits.
 */
export interface Counters {
  /** The next value of counter `name`: 1, 2, 3, … */
  next(name: string): Promise<number>;
}
